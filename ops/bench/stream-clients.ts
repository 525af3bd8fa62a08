/**
 * bench:supervisor's stream clients, in a process of their own (forked with IPC) so their parsing
 * does not share an event loop with the bench that drives and measures: opens `count` clients of
 * `/Supervisor/stream` with Basic auth and keeps each delta's lag (its `at` → receipt here, 1 ms
 * buckets) in a histogram rather than the frames, so millions of deltas cost no memory. One client
 * parses every frame (a batch of deltas is an array) and checks that `seq` only grows; the others
 * read each delta's `at` from the bytes: the 100 clients share one process on a 2-core machine,
 * where a hundred real supervisors would each parse on their own machine.
 *
 * Argv: <base url> <account sid> <auth token> <count>. IPC: sends `{ready}` once every client has its
 * snapshot; answers `{report}` with `{deltas, p50, p99, max, frames, disconnected}`.
 */
import WebSocket from 'ws';

const [url = '', accountSid = '', token = '', countArg] = process.argv.slice(2);
const count = Number(countArg);
if (!url || !accountSid || !token || !(count > 0))
  throw new Error('usage: <url> <accountSid> <token> <count>');

const MAX_LAG_MS = 120_000;

/** Lags in 1 ms buckets (the last one: that long or longer). */
class Histogram {
  readonly buckets = new Uint32Array(MAX_LAG_MS + 1);
  count = 0;

  add(lag: number): void {
    this.count++;
    const ms = Math.min(MAX_LAG_MS, Math.max(0, Math.round(lag)));
    this.buckets[ms] = (this.buckets[ms] as number) + 1;
  }

  percentile(p: number): number {
    if (this.count === 0) return Number.NaN;
    const rank = Math.ceil((p / 100) * this.count);
    let seen = 0;
    for (let ms = 0; ms <= MAX_LAG_MS; ms++) {
      seen += this.buckets[ms] as number;
      if (seen >= rank) return ms;
    }
    return MAX_LAG_MS;
  }

  max(): number {
    for (let ms = MAX_LAG_MS; ms >= 0; ms--) if ((this.buckets[ms] as number) > 0) return ms;
    return Number.NaN;
  }
}

const all = new Histogram();
/** Per delta type, from the fully parsing client (where a slow one comes from). */
const byType = new Map<string, Histogram>();
let frames = 0;
const closes: number[] = [];

function record(type: string | null, at: number, receivedAt: number): void {
  const lag = receivedAt - at;
  all.add(lag);
  if (type === null) return;
  let h = byType.get(type);
  if (!h) {
    h = new Histogram();
    byType.set(type, h);
  }
  h.add(lag);
}

const AT = Buffer.from('"at":');
const SKIPPED = [Buffer.from('{"type":"snapshot"'), Buffer.from('{"type":"metrics"')];

/**
 * The cheap reader: each delta's `at` read straight from the frame's bytes (no other member is
 * named `at`), the way a hundred separate machines would each read their own copy at no cost to
 * the others. Frames other than deltas come alone and are skipped by their first bytes.
 */
function scan(data: Buffer, receivedAt: number): void {
  if (SKIPPED.some((p) => data.subarray(0, p.length).equals(p))) return;
  for (let i = data.indexOf(AT); i !== -1; i = data.indexOf(AT, i + AT.length)) {
    let at = 0;
    for (let j = i + AT.length; j < data.length; j++) {
      const d = (data[j] as number) - 48;
      if (d < 0 || d > 9) break;
      at = at * 10 + d;
    }
    record(null, at, receivedAt);
  }
}

/** Seq order as seen by the parsing client (it must only grow). */
let outOfOrder = 0;
let lastSeq = 0;

/** The full reader (one client): every frame parsed, every delta's seq checked. */
function parse(data: Buffer, receivedAt: number, ready: () => void): void {
  const parsed = JSON.parse(String(data)) as Frame | Frame[];
  for (const f of Array.isArray(parsed) ? parsed : [parsed]) {
    if (f.type === 'snapshot') {
      lastSeq = f.seq;
      ready();
    }
    if (f.type === 'metrics' || f.type === 'snapshot') continue;
    if (f.seq <= lastSeq) outOfOrder++;
    lastSeq = f.seq;
    record(f.type, f.at, receivedAt);
  }
}

interface Frame {
  readonly type: string;
  readonly seq: number;
  readonly at: number;
}

function open(full: boolean): Promise<void> {
  const auth = `Basic ${Buffer.from(`${accountSid}:${token}`).toString('base64')}`;
  const ws = new WebSocket(
    `${url.replace(/^http/, 'ws')}/2012-04-24/Accounts/${accountSid}/Supervisor/stream`,
    {
      headers: { authorization: auth },
    },
  );
  return new Promise((resolve, reject) => {
    // Kept for the whole life of the socket: an error after the open only ends in 'close'.
    ws.on('error', reject);
    ws.on('message', (data: Buffer) => {
      const receivedAt = Date.now();
      frames++;
      if (full) parse(data, receivedAt, resolve);
      else if (data.subarray(0, SKIPPED[0]!.length).equals(SKIPPED[0]!)) resolve();
      else scan(data, receivedAt);
    });
    ws.on('close', (code) => closes.push(code));
  });
}

process.on('message', (m: { type?: string }) => {
  if (m?.type !== 'report') return;
  process.send?.({
    type: 'report',
    deltas: all.count,
    frames,
    p50: all.percentile(50),
    p99: all.percentile(99),
    max: all.max(),
    disconnected: closes,
    byType: Object.fromEntries(
      [...byType].map(([t, h]) => [
        t,
        { n: h.count, p50: h.percentile(50), p99: h.percentile(99), max: h.max() },
      ]),
    ),
    outOfOrder,
  });
});
process.on('disconnect', () => process.exit(0));

// Connected a few at a time: 100 upgrades at once would queue behind the server's Basic checks.
for (let i = 0; i < count; i += 10)
  await Promise.all(Array.from({ length: Math.min(10, count - i) }, (_, k) => open(i + k === 0)));
process.send?.({ type: 'ready' });
