/**
 * The supervisor dashboard: log in, then keep a live view of the node's calls and figures, from the
 * Supervisor stream when the server offers one, else by polling the Supervisor REST API every 2 s.
 * Rows are keyed by call sid and updated in place; durations tick locally every second. Actions
 * (hang up, mute, redirect) go through the Calls REST resource like any other client's.
 */
import { ApiError, createApi } from './api.js';
import { drawChart, Series } from './chart.js';
import { callFromStream, connectStream } from './stream.js';

const POLL_MS = 2000;
const TICK_MS = 1000;
const CHART_WINDOW_MS = 5 * 60_000;
/** How often a polling page looks again for the stream. */
const STREAM_RETRY_MS = 30_000;

const $ = (id) => document.getElementById(id);

/** The session: everything here (the credential included) lives in memory only. */
let session;

$('login').addEventListener('submit', (e) => {
  e.preventDefault();
  const form = new FormData(e.target);
  login(String(form.get('user')).trim(), String(form.get('secret'))).catch((err) => {
    $('login-error').textContent = describe(err);
  });
});
$('logout').addEventListener('click', () => logout());

async function login(user, secret) {
  $('login-error').textContent = '';
  const api = createApi(user, secret);
  const account = await api.account();
  // The node's view is the Super Admin's; an Administrator gets its own account tree.
  let scope = 'node';
  let first;
  try {
    first = await api.metrics(account.sid, scope);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 403) throw e;
    scope = 'account';
    first = await api.metrics(account.sid, scope);
  }
  session = {
    api,
    account,
    scope,
    calls: new Map(),
    // Bindings `aor contact` → registration, kept by the stream (unknown while polling).
    registrations: undefined,
    metrics: {},
    series: new Series(CHART_WINDOW_MS),
    stream: undefined,
    timers: [],
  };
  $('login').reset();
  $('login-view').hidden = true;
  $('board').hidden = false;
  $('logout').hidden = false;
  $('who').textContent =
    `${account.email_address ?? account.sid}${scope === 'account' ? ' (account tree)' : ''}`;
  applyRest(first);
  session.timers.push(setInterval(tick, TICK_MS));
  await useStreamOrPoll();
}

function logout() {
  if (!session) return;
  for (const t of session.timers) clearInterval(t);
  clearTimeout(session.poll);
  session.stream?.close();
  session = undefined;
  $('calls').tBodies[0].replaceChildren();
  $('board').hidden = true;
  $('logout').hidden = true;
  $('feed').hidden = true;
  $('who').textContent = '';
  $('login-view').hidden = false;
}

// ---------------------------------------------------------------------------------------------
// Feeds

async function useStreamOrPoll() {
  const s = session;
  try {
    const stream = await connectStream({
      api: s.api,
      accountSid: s.account.sid,
      scope: s.scope,
      onSnapshot: (snap) => s === session && applySnapshot(snap),
      onEvent: (ev) => s === session && applyEvent(ev),
      onDown: () => s === session && startPolling(),
    });
    // Logged out while connecting: this stream belongs to nobody.
    if (s !== session) {
      stream.close();
      return;
    }
    s.stream = stream;
    showFeed('live stream');
  } catch {
    if (s === session) startPolling();
  }
}

function startPolling() {
  const s = session;
  s.stream = undefined;
  showFeed('polling every 2 s');
  const since = Date.now();
  const poll = async () => {
    if (s !== session) return;
    try {
      applyRest(await s.api.metrics(s.account.sid, s.scope));
      $('status').textContent = '';
    } catch (e) {
      $('status').textContent = `Refresh failed: ${describe(e)}`;
    }
    if (s !== session) return;
    // Feature detection again now and then: the stream may have appeared (an upgraded server).
    if (Date.now() - since > STREAM_RETRY_MS) {
      useStreamOrPoll();
      return;
    }
    s.poll = setTimeout(poll, POLL_MS);
  };
  s.poll = setTimeout(poll, POLL_MS);
}

function showFeed(text) {
  $('feed').textContent = text;
  $('feed').hidden = false;
}

/** The REST document: the whole picture every time. */
function applyRest(doc) {
  const calls = Array.isArray(doc.LiveCallDetails) ? doc.LiveCallDetails : [];
  applySnapshot({ calls: calls.map(callFromStream), metrics: doc.Metrics ?? {} });
}

function applySnapshot({ calls, registrations, metrics }) {
  if (registrations) session.registrations = new Map(registrations.map((r) => [`${r.aor} ${r.contact}`, r]));
  const seen = new Set();
  for (const c of calls) {
    seen.add(c.sid);
    // Keep what only the stream knows (verb, peer) when a poll does not say.
    const before = session.calls.get(c.sid);
    session.calls.set(c.sid, before ? merge(before, c) : c);
  }
  for (const sid of session.calls.keys()) if (!seen.has(sid)) removeCall(sid);
  applyMetrics(metrics);
  render();
}

function applyEvent(ev) {
  if (ev.type === 'call.created' || ev.type === 'call.updated') {
    const before = session.calls.get(ev.call.sid);
    session.calls.set(ev.call.sid, before ? merge(before, ev.call) : ev.call);
  } else if (ev.type === 'call.ended') {
    removeCall(ev.call.sid);
  } else if (ev.type === 'metrics') {
    if (ev.metrics) applyMetrics({ ...session.metrics, ...ev.metrics });
  } else if (ev.type === 'registration.changed' && ev.registration && session.registrations) {
    const key = `${ev.registration.aor} ${ev.registration.contact}`;
    if (ev.state === 'registered') session.registrations.set(key, ev.registration);
    else session.registrations.delete(key);
    const aors = new Set([...session.registrations.values()].map((r) => r.aor));
    applyMetrics({ ...session.metrics, RegisteredUsers: aors.size });
  }
  // Figures come every few seconds; the live counts follow the calls at once.
  if (ev.type.startsWith('call.')) applyMetrics({ ...session.metrics, ...liveCounts() });
  render();
}

/** LiveCalls and its split by direction, from the calls on the board. */
function liveCounts() {
  let incoming = 0;
  for (const c of session.calls.values()) if (c.direction === 'inbound') incoming += 1;
  const all = session.calls.size;
  return { LiveCalls: all, LiveIncomingCalls: incoming, LiveOutgoingCalls: all - incoming };
}

function merge(before, after) {
  const out = { ...before };
  for (const [k, v] of Object.entries(after)) if (v !== undefined && v !== '') out[k] = v;
  return out;
}

function removeCall(sid) {
  session.calls.delete(sid);
  session.api.forget(sid);
}

function applyMetrics(metrics) {
  session.metrics = metrics;
  for (const node of document.querySelectorAll('[data-metric]')) {
    const v = metrics[node.dataset.metric];
    node.textContent = v === null || v === undefined ? '–' : String(v);
  }
}

// ---------------------------------------------------------------------------------------------
// Rendering

function render() {
  const body = $('calls').tBodies[0];
  const rows = new Map([...body.rows].map((r) => [r.dataset.sid, r]));
  for (const [sid, row] of rows) if (!session.calls.has(sid)) row.remove();
  for (const call of session.calls.values()) {
    const row = rows.get(call.sid) ?? body.appendChild(newRow(call));
    fill(row, call);
  }
  $('no-calls').hidden = session.calls.size > 0;
  session.series.add(Date.now(), liveCount());
  drawChart($('chart'), session.series, Date.now());
  $('chart-peak').textContent = String(session.series.peak());
}

function tick() {
  for (const row of $('calls').tBodies[0].rows) {
    const call = session.calls.get(row.dataset.sid);
    if (call) row.querySelector('.duration').textContent = duration(call);
  }
  // The chart keeps moving when nothing changes.
  session.series.add(Date.now(), liveCount());
  drawChart($('chart'), session.series, Date.now());
}

function liveCount() {
  const live = session.metrics.LiveCalls;
  return typeof live === 'number' ? live : session.calls.size;
}

const COLUMNS = ['from', 'to', 'direction', 'state', 'duration', 'verb', 'peer'];

function newRow(call) {
  const row = document.createElement('tr');
  row.dataset.sid = call.sid;
  for (const name of COLUMNS) {
    const td = row.insertCell();
    td.className = name === 'duration' ? 'duration num' : name;
  }
  const actions = row.insertCell();
  actions.className = 'actions';
  actions.append(
    button('Hang up', 'danger', () => act(row, { Status: 'completed' }, 'hang up')),
    button('Mute', 'mute', () => {
      const muted = session.calls.get(row.dataset.sid)?.muted === true;
      return act(row, { Mute: String(!muted) }, muted ? 'unmute' : 'mute');
    }),
    button('Redirect', 'redirect', () => askRedirect(row)),
  );
  return row;
}

function fill(row, call) {
  const text = {
    from: call.from,
    to: call.to,
    direction: call.direction,
    state: call.state,
    duration: duration(call),
    verb: call.verb ?? '–',
    peer: peerOf(call.peer),
  };
  COLUMNS.forEach((name, i) => {
    const cell = row.cells[i];
    if (cell.textContent !== text[name]) cell.textContent = text[name];
  });
  row.querySelector('button.mute').textContent = call.muted === true ? 'Unmute' : 'Mute';
}

function peerOf(peer) {
  if (!peer) return '–';
  if (typeof peer === 'string') return peer;
  return String(peer.to ?? peer.sid ?? '–');
}

function button(label, className, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  b.className = className;
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      await onClick();
    } finally {
      b.disabled = false;
    }
  });
  return b;
}

/** Duration since the call was answered when known, else since it was created: `m:ss` or `h:mm:ss`. */
function duration(call) {
  const from = call.answeredAt ?? call.startedAt;
  if (!from) return '–';
  const total = Math.max(0, Math.floor((Date.now() - from) / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

// ---------------------------------------------------------------------------------------------
// Actions

async function act(row, form, what) {
  const sid = row.dataset.sid;
  const call = session.calls.get(sid);
  try {
    const answer = await session.api.modifyCall(session.account.sid, sid, form, call?.accountSid);
    $('status').textContent = '';
    if (form.Status === 'completed') row.classList.add('leaving');
    // The REST answer to a Mute carries the call's muted state; the summary views do not.
    if (typeof answer?.muted === 'boolean' && session.calls.has(sid)) {
      session.calls.set(sid, { ...session.calls.get(sid), muted: answer.muted });
      render();
    }
  } catch (e) {
    $('status').textContent = `Could not ${what} ${sid}: ${describe(e)}`;
  }
}

function askRedirect(row) {
  const dialog = $('redirect-dialog');
  $('redirect-call').textContent = row.dataset.sid;
  $('redirect-form').reset();
  dialog.returnValue = '';
  dialog.addEventListener(
    'close',
    () => {
      const url = $('redirect-form').elements.url.value.trim();
      if (dialog.returnValue === 'ok' && url) act(row, { Url: url }, 'redirect');
    },
    { once: true },
  );
  dialog.showModal();
}

function describe(err) {
  if (err instanceof ApiError && err.status === 401) return 'Wrong credentials';
  if (err instanceof ApiError && err.status === 403) return 'This account may not supervise';
  return err instanceof Error ? err.message : String(err);
}
