/**
 * The Supervisor stream client (docs/supervision.md: `…/Accounts/{sid}/Supervisor/stream?ticket=…`, JSON
 * text frames: a `snapshot` {seq, calls, metrics}, then `call.created`, `call.updated`, `call.ended`,
 * `metrics` and `registration.changed`, each with a rising `seq` and a time `at`). Kept apart from
 * the page so the protocol can change here alone.
 *
 * Browsers cannot set headers on a WebSocket, hence the single-use ticket obtained over REST. After a
 * drop the client reconnects with `since=<last seq>`: the server replays the gap or sends a new
 * snapshot. Whoever calls `connectStream` falls back to polling when it rejects or `onDown` fires.
 */
import { API_ROOT } from './api.js';

const MAX_FAILURES = 3;
const RETRY_MS = 1000;

/**
 * Opens the stream. Resolves once the socket is open; rejects when the server offers no stream (the
 * tickets endpoint answers an error) or the first connection fails.
 */
export async function connectStream({ api, accountSid, scope, onSnapshot, onEvent, onDown }) {
  let lastSeq;
  let failures = 0;
  let closed = false;
  let socket;
  let retry;

  const open = async () => {
    const { ticket } = (await api.ticket(accountSid)) ?? {};
    if (typeof ticket !== 'string' || ticket === '') throw new Error('the tickets endpoint gave no ticket');
    const query = new URLSearchParams({ ticket });
    if (scope === 'account') query.set('Scope', 'account');
    if (lastSeq !== undefined) query.set('since', String(lastSeq));
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = `${proto}//${location.host}${API_ROOT}/Accounts/${encodeURIComponent(accountSid)}/Supervisor/stream?${query}`;
    const ws = new WebSocket(url);
    // Listening from the start: the snapshot may be delivered in the same turn as the open event.
    ws.addEventListener('message', (m) => receive(m.data));
    await new Promise((resolve, reject) => {
      ws.addEventListener('open', resolve, { once: true });
      const fail = () => reject(new Error('stream connection failed'));
      // A refused connection may report only a close, with no error event before it.
      ws.addEventListener('error', fail, { once: true });
      ws.addEventListener('close', fail, { once: true });
    });
    socket = ws;
    ws.addEventListener('close', () => {
      if (closed || socket !== ws) return;
      reconnect();
    });
  };

  const receive = (data) => {
    let parsed;
    try {
      parsed = JSON.parse(data);
    } catch {
      return;
    }
    // Several deltas of one flush window come as an array, in seq order.
    for (const frame of Array.isArray(parsed) ? parsed : [parsed]) receiveFrame(frame);
  };

  const receiveFrame = (frame) => {
    if (typeof frame?.seq !== 'number') return;
    failures = 0;
    if (frame.type === 'snapshot') {
      lastSeq = frame.seq;
      onSnapshot({
        calls: (frame.calls ?? []).map(callFromStream),
        registrations: Array.isArray(frame.registrations) ? frame.registrations : undefined,
        metrics: frame.metrics ?? {},
      });
      return;
    }
    // Figures carry the seq of the last delta they include: always news, never a delta.
    if (frame.type === 'metrics') {
      if (lastSeq !== undefined) onEvent(eventFromStream(frame));
      return;
    }
    // Before the snapshot, or a replay. Seq may skip (deltas outside an account's tree are not
    // sent); the server never leaves a silent gap (a resume it cannot replay gets a snapshot).
    if (lastSeq === undefined || frame.seq <= lastSeq) return;
    lastSeq = frame.seq;
    onEvent(eventFromStream(frame));
  };

  const reconnect = () => {
    if (closed) return;
    failures += 1;
    if (failures > MAX_FAILURES) {
      closed = true;
      onDown();
      return;
    }
    retry = setTimeout(() => open().catch(reconnect), RETRY_MS * failures);
  };

  await open();
  return {
    close() {
      closed = true;
      clearTimeout(retry);
      socket?.close(1000, 'bye');
    },
  };
}

/** A delta in the page's terms: `{type, at, call?, metrics?}`. */
function eventFromStream(frame) {
  const at = typeof frame.at === 'number' ? frame.at : Date.parse(frame.at) || Date.now();
  const call = frame.call ?? (frame.sid ? frame : undefined);
  return {
    type: frame.type,
    at,
    call: call ? callFromStream(call) : undefined,
    metrics: frame.metrics,
    registration: frame.registration,
    state: frame.state,
  };
}

/**
 * A stream call in the page's shape. Both the REST (Restcomm) spellings and camelCase ones are
 * accepted, so this is the one place to adjust when the stream's call schema settles.
 */
const LIVE_STATE = { queued: 'QUEUED', ringing: 'RINGING', 'in-progress': 'IN_PROGRESS' };

export function callFromStream(c) {
  const pick = (...keys) => keys.map((k) => c[k]).find((v) => v !== undefined && v !== null);
  const time = (v) => (typeof v === 'number' ? v : v ? Date.parse(v) : undefined);
  return {
    sid: c.sid,
    accountSid: pick('accountSid', 'account_sid', 'AccountSid'),
    from: pick('from', 'From') ?? '',
    to: pick('to', 'To') ?? '',
    direction: pick('direction', 'Direction') ?? '',
    // The stream spells statuses as the Calls resource does; the page shows Restcomm's live-call states.
    state:
      LIVE_STATE[pick('state', 'State', 'status', 'Status')] ??
      pick('state', 'State', 'status', 'Status') ??
      '',
    startedAt: time(pick('dateCreated', 'date_created', 'startedAt')),
    answeredAt: time(pick('answeredAt', 'answered_at')),
    verb: pick('verb', 'currentVerb', 'current_verb'),
    peer: pick('bridged', 'bridgedWith', 'bridgedPeer', 'bridged_with', 'peer'),
    muted: pick('muted', 'Muted'),
  };
}
