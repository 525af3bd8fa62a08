/**
 * Media engine benchmark: N concurrent endpoints, each playing a looped prompt to its
 * peer and recording what the peer sends, N stepped 50 → 500. The peers (one UDP socket each, one
 * self-correcting 20 ms clock, PCMU) run in this process; the engine is the real forked process.
 *
 *   npm run bench:media      (BENCH_STEPS=50,100,150,200,250,300,400,500 BENCH_SECONDS=10 BENCH_WARMUP=2)
 *
 * Peers send in 4 phases 5 ms apart, as independent phones would (BENCH_PHASES=1: one burst).
 *
 * Per N it prints: engine CPU (% of one core) and per endpoint, tick lateness p50/p99/max, ticks
 * skipped by the clock (a skipped tick sends nothing, so it shows as packets/s below 50, not as a
 * sequence gap), packet loss both ways (from RTP sequence numbers), engine RSS, recordings stored. Target: ≥ 250
 * endpoints with p99 lateness < 5 ms and 0 loss.
 *
 * BENCH_CHURN=<calls/s> instead: the engine's side of bench:calls scenario A without the server.
 * Endpoints are created from sipp's offer (PCMU + telephone-event) at that rate for BENCH_SECONDS
 * and released BENCH_HOLD s later (default 2); the far end never sends, so each endpoint sends
 * silence to an address it never latches. Prints the engine's CPU per call (setup, silence, release).
 */
import { createSocket, type Socket } from 'node:dgram';
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { encodeG711 } from '../../src/media/engine/g711.js';
import { tone } from '../../src/media/engine/pcm.js';
import { buildRtp, parseRtp, SequenceTracker } from '../../src/media/engine/rtp.js';
import type { MediaEvent } from '../../src/media/port.js';
import { playAndRecord, startBenchEngine } from '../lib/bench-engine.js';

// N = 0 first: the idle engine's lateness is the floor this box imposes right now (other processes
// share the two cores); report the other rows against it.
const steps = (process.env.BENCH_STEPS ?? '0,50,100,150,200,250,300,400,500').split(',').map(Number);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmup = Number(process.env.BENCH_WARMUP ?? 2);
const PEER_IP = '127.0.0.2';

interface Peer {
  readonly socket: Socket;
  readonly port: number;
  readonly seq: SequenceTracker;
  received: number;
  sent: number;
  outSeq: number;
  ts: number;
  readonly ssrc: number;
}

async function openPeer(): Promise<Peer> {
  const socket = createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, PEER_IP, () => r()));
  const peer: Peer = {
    socket,
    port: socket.address().port,
    seq: new SequenceTracker(),
    received: 0,
    sent: 0,
    outSeq: 0,
    ts: 0,
    ssrc: Math.floor(Math.random() * 2 ** 32),
  };
  socket.on('message', (msg) => {
    const p = parseRtp(msg);
    if (!p) return;
    peer.received++;
    peer.seq.push(p.ssrc, p.sequence);
  });
  return peer;
}

function peerSdp(port: number): string {
  return `v=0\r\no=bench 1 1 IN IP4 ${PEER_IP}\r\ns=-\r\nc=IN IP4 ${PEER_IP}\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\na=sendrecv\r\n`;
}

/**
 * The load generator: every peer sends one 20 ms PCMU packet per 20 ms to its endpoint. Real
 * phones are not synchronised, so the peers are split into PHASES groups sending 20/PHASES ms
 * apart (BENCH_PHASES=1 sends every packet in one burst, the worst case for the engine).
 */
const PHASES = Number(process.env.BENCH_PHASES ?? 4);
class Generator {
  private timer: NodeJS.Timeout | null = null;
  private readonly frames: Uint8Array[];
  /** Sub-ticks run (PHASES per 20 ms). */
  private n = 0;
  private start = 0;
  targets = new Map<Peer, { address: string; port: number }>();

  constructor() {
    const pcm = tone(350, 1000, 6000);
    this.frames = Array.from({ length: 50 }, (_, i) =>
      encodeG711('PCMU', pcm.subarray(i * 160, i * 160 + 160)),
    );
  }

  run(): void {
    this.start = performance.now();
    const sub = 20 / PHASES;
    const peers = [...this.targets];
    const step = (): void => {
      const due = Math.floor((performance.now() - this.start) / sub) + 1;
      while (this.n < due) {
        const phase = this.n % PHASES;
        const frame = this.frames[Math.floor(this.n / PHASES) % this.frames.length]!;
        for (let i = phase; i < peers.length; i += PHASES) {
          const [peer, to] = peers[i]!;
          peer.socket.send(buildRtp(0, peer.outSeq, peer.ts, peer.ssrc, frame), to.port, to.address);
          peer.outSeq = (peer.outSeq + 1) & 0xffff;
          peer.ts = (peer.ts + 160) >>> 0;
          peer.sent++;
        }
        this.n++;
      }
      this.timer = setTimeout(step, Math.max(0, this.start + this.n * sub - performance.now()));
    };
    step();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}

/** Linux PSI: share of the last 10 s in which some runnable task waited for a CPU. */
async function cpuPressure(): Promise<string> {
  const text = await readFile('/proc/pressure/cpu', 'utf8').catch(() => '');
  return text.match(/some avg10=([\d.]+)/)?.[1] ?? 'n/a';
}

const { engine, root, dispose } = await startBenchEngine('media', { min: 40000, max: 41999 });
if (process.env.BENCH_CHURN) {
  await churn(Number(process.env.BENCH_CHURN), Number(process.env.BENCH_HOLD ?? 2));
  await dispose();
  process.exit(0);
}

/** BENCH_CHURN (see the file header). */
async function churn(rate: number, holdSeconds: number): Promise<void> {
  await engine.start();
  const sink = await openPeer();
  const sdp = peerSdp(sink.port);
  let released = 0;
  const off = engine.subscribe((e) => {
    if (e.type === 'media.released') released++;
  });
  const total = Math.round(rate * seconds);
  await engine.load(); // starts the measurement window
  const t0 = performance.now();
  for (let made = 0; made < total; ) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate));
    for (; made < due; made++) {
      const id = `churn-${made}`;
      engine.createEndpoint(id, { remoteSdp: sdp });
      setTimeout(() => engine.release(id), holdSeconds * 1000);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  // Bounded: an endpoint that never reports its release ends the run with an error, not a hang.
  const releasedBy = performance.now() + (holdSeconds + 10) * 1000;
  while (released < total) {
    if (performance.now() > releasedBy)
      throw new Error(`churn: ${total - released} endpoints never released`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const load = await engine.load();
  const wall = performance.now() - t0;
  off();
  sink.socket.close();
  const msPerCall = ((load.cpuPercent / 100) * wall) / total;
  process.stdout.write(
    `churn: ${total} endpoints at ${rate}/s held ${holdSeconds} s, the far end silent: engine ` +
      `${msPerCall.toFixed(3)} ms CPU per call (${load.cpuPercent} % of one core over ${(wall / 1000).toFixed(1)} s); ` +
      `${(sink.received / total).toFixed(1)} packets per call reached the far end; load average ` +
      `${loadavg()[0]!.toFixed(2)}\n`,
  );
}
const events: MediaEvent[] = [];
const waiters = new Set<() => void>();
engine.subscribe((e) => {
  events.push(e);
  for (const w of waiters) w();
});
async function waitCount(pred: (e: MediaEvent) => boolean, n: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (events.filter(pred).length < n) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} events`);
    await new Promise<void>((r) => {
      const w = (): void => {
        waiters.delete(w);
        r();
      };
      waiters.add(w);
      setTimeout(w, 200);
    });
  }
}
await engine.start();
const prompt = join(root, 'prompt.wav');
{
  // A 5 s prompt, played in a loop by every endpoint (decoded once, shared).
  const { wavHeader, pcmToBytes } = await import('../../src/media/engine/wav.js');
  const pcm = tone(440, 5000, 6000);
  const { writeFile } = await import('node:fs/promises');
  await writeFile(prompt, Buffer.concat([wavHeader(pcm.length * 2), pcmToBytes(pcm)]));
}

const rows: Record<string, number | string>[] = [];
let run = 0;
for (const n of steps) {
  run++;
  events.length = 0;
  const peers = await Promise.all(Array.from({ length: n }, openPeer));
  const ids = peers.map((_, i) => `bench-${run}-${i}`);
  peers.forEach((p, i) => {
    engine.createEndpoint(ids[i]!, { remoteSdp: peerSdp(p.port) });
  });
  await waitCount((e) => e.type === 'media.endpointReady', n);
  const gen = new Generator();
  for (const e of events) {
    if (e.type !== 'media.endpointReady') continue;
    const i = ids.indexOf(e.endpoint.endpointId);
    gen.targets.set(peers[i]!, { address: e.endpoint.address, port: e.endpoint.port });
  }
  playAndRecord(engine, ids, prompt);
  gen.run();
  await new Promise((r) => setTimeout(r, warmup * 1000));
  await engine.load(); // starts the measurement window
  const before = await Promise.all(ids.map((id) => engine.stats(id)));
  const peerBefore = peers.map((p) => ({ received: p.received, lost: p.seq.lost }));
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const load = await engine.load();
  const elapsed = (performance.now() - t0) / 1000;
  const after = await Promise.all(ids.map((id) => engine.stats(id)));
  let inReceived = 0;
  let inLost = 0;
  let lateTicks = 0;
  after.forEach((s, i) => {
    inReceived += (s?.packetsIn ?? 0) - (before[i]?.packetsIn ?? 0);
    inLost += (s?.packetsLost ?? 0) - (before[i]?.packetsLost ?? 0);
    lateTicks += (s?.lateTicks ?? 0) - (before[i]?.lateTicks ?? 0);
  });
  let outReceived = 0;
  let outLost = 0;
  peers.forEach((p, i) => {
    outReceived += p.received - peerBefore[i]!.received;
    outLost += p.seq.lost - peerBefore[i]!.lost;
  });
  gen.stop();
  for (const id of ids) engine.release(id);
  await waitCount((e) => e.type === 'media.released', n);
  await waitCount((e) => e.type === 'media.recordDone' || e.type === 'media.recordFailed', n);
  for (const p of peers) p.socket.close();
  const row = {
    endpoints: n,
    cpuPercent: load.cpuPercent,
    cpuPerEndpoint: n === 0 ? 0 : Number((load.cpuPercent / n).toFixed(3)),
    lateP50Ms: load.tickLateP50Ms,
    lateP99Ms: load.tickLateP99Ms,
    lateMaxMs: load.tickLateMaxMs,
    tickWorkP50Ms: load.tickWorkP50Ms,
    tickWorkP99Ms: load.tickWorkP99Ms,
    tickWorkMaxMs: load.tickWorkMaxMs,
    skippedTicks: load.skippedTicks,
    lossInPercent: Number(((inLost / Math.max(1, inReceived + inLost)) * 100).toFixed(3)),
    lossOutPercent: Number(((outLost / Math.max(1, outReceived + outLost)) * 100).toFixed(3)),
    ppsOutPerEndpoint: n === 0 ? 0 : Number((outReceived / elapsed / n).toFixed(2)),
    rssMB: Math.round(load.rssBytes / 1024 / 1024),
    recordingsStored: events.filter((e) => e.type === 'media.recordDone').length,
    recordFailures: events.filter((e) => e.type === 'media.recordFailed').length,
    lateEndpointTicks: lateTicks,
    // Other processes compete for the two cores; this is the 1-minute load average at the end.
    loadAverage: Number(loadavg()[0]!.toFixed(2)),
    cpuPressure: await cpuPressure(),
  };
  rows.push(row);
  process.stdout.write(`${JSON.stringify(row)}\n`);
}

process.stdout.write(
  '\n| N | CPU % of one core | per endpoint | tick late p50 / p99 / max (ms) | tick work p50 / p99 (ms) | skipped ticks | loss in / out | pps out per endpoint | RSS | CPU pressure |\n',
);
process.stdout.write('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n');
for (const r of rows) {
  process.stdout.write(
    `| ${r.endpoints} | ${r.cpuPercent} | ${r.cpuPerEndpoint} % | ${r.lateP50Ms} / ${r.lateP99Ms} / ${r.lateMaxMs} | ${r.tickWorkP50Ms} / ${r.tickWorkP99Ms} | ${r.skippedTicks} | ${r.lossInPercent} % / ${r.lossOutPercent} % | ${r.ppsOutPerEndpoint} | ${r.rssMB} MB | ${r.cpuPressure} % |\n`,
  );
}
await dispose();
