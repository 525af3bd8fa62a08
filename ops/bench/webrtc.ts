/**
 * WebRTC media benchmark: engine CPU per leg and tick lateness with N concurrent WebRTC legs
 * (ICE-lite, DTLS-SRTP, Opus ↔ 8 kHz PCM), next to N plain RTP G.711 legs measured in the same run.
 * Every leg plays a looped prompt to its peer and records what the peer sends, as in bench:media.
 *
 *   npm run bench:webrtc      (BENCH_STEPS=50,100 BENCH_SECONDS=10 BENCH_WARMUP=3)
 *   BENCH_BASE_DIR=/tmp/base npm run bench:webrtc   (also that checkout's engine, rows interleaved)
 *
 * The WebRTC peers are werift RTCPeerConnections in this process (full ICE, DTLS client), sending
 * pre-encoded 48 kHz Opus (or, for the `WebRTC PCMU` row, PCMU: SRTP without transcoding cost)
 * every 20 ms over SRTP; the plain peers send PCMU over UDP. `WebRTC Opus` legs all play one prompt
 * (its Opus frames are encoded once, shared); `WebRTC Opus, own prompts` legs each play their own
 * copy, longer than a step, so every leg encodes every frame it sends, as a leg carrying live audio
 * does. BENCH_KINDS picks rows. The engine is
 * the real forked process. Goal: WebRTC ≤ 4× the plain per-leg CPU and p99 lateness < 5 ms at 100.
 */
import { createSocket, type Socket } from 'node:dgram';
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RTCPeerConnection, RTCRtpCodecParameters, type RTCRtpTransceiver, RtpHeader } from 'werift';
import { encodeG711 } from '../../src/media/engine/g711.js';
import { tone } from '../../src/media/engine/pcm.js';
import { buildRtp } from '../../src/media/engine/rtp.js';
import { pcmToBytes, wavHeader } from '../../src/media/engine/wav.js';
import { OpusCodec } from '../../src/media/engine/webrtc/opus.js';
import type { MediaEngine } from '../../src/media/media-engine.js';
import type { MediaEvent } from '../../src/media/port.js';
import { playAndRecord, startBenchEngine } from '../lib/bench-engine.js';

const steps = (process.env.BENCH_STEPS ?? '50,100').split(',').map(Number);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmup = Number(process.env.BENCH_WARMUP ?? 3);
const PEER_IP = '127.0.0.2';
/** Set-up attempts per leg beyond the first. */
const SETUP_RETRIES = 3;

/** One far end: sends a frame when asked, counts what it receives. */
interface Leg {
  received: number;
  sendFrame(i: number): void;
  close(): Promise<void>;
}

/**
 * 50 frames (1 s) of a tone, Opus-encoded once as a browser sends it. Our answer carries
 * maxplaybackrate=8000, after which Chromium sends SILK narrowband (seen: TOC config 1), so the
 * far end encodes narrowband; BENCH_OPUS_FULLBAND=1 sends full-band frames (Chromium without that
 * parameter: hybrid and CELT at 48 kHz), as the benchmark did before.
 */
const opusFrames = ((): Buffer[] => {
  const rate = process.env.BENCH_OPUS_FULLBAND ? 48000 : 8000;
  const n = rate / 50;
  const enc = new OpusCodec(rate);
  const frames: Buffer[] = [];
  for (let f = 0; f < 50; f++) {
    const pcm = new Int16Array(n);
    for (let i = 0; i < n; i++)
      pcm[i] = Math.round(6000 * Math.sin((2 * Math.PI * 350 * (f * n + i)) / rate));
    frames.push(Buffer.from(enc.encode(pcm)));
  }
  enc.close();
  return frames;
})();
const pcmuFrames = ((): Uint8Array[] => {
  const pcm = tone(350, 1000, 6000);
  return Array.from({ length: 50 }, (_, i) => encodeG711('PCMU', pcm.subarray(i * 160, i * 160 + 160)));
})();

async function webrtcLeg(
  engine: MediaEngine,
  id: string,
  ready: (id: string) => Promise<string>,
  codec: 'opus' | 'PCMU',
): Promise<Leg> {
  const pc = new RTCPeerConnection({
    codecs: {
      audio: [
        ...(codec === 'opus'
          ? [
              new RTCRtpCodecParameters({
                mimeType: 'audio/opus',
                clockRate: 48000,
                channels: 2,
                payloadType: 111,
              }),
            ]
          : []),
        new RTCRtpCodecParameters({ mimeType: 'audio/PCMU', clockRate: 8000, payloadType: 0 }),
        new RTCRtpCodecParameters({ mimeType: 'audio/telephone-event', clockRate: 48000, payloadType: 110 }),
        new RTCRtpCodecParameters({ mimeType: 'audio/telephone-event', clockRate: 8000, payloadType: 126 }),
      ],
    },
    headerExtensions: { audio: [] },
    // Loopback only: no STUN server look-up per leg.
    iceServers: [],
    iceUseIpv4: false,
    iceUseIpv6: false,
    iceAdditionalHostAddresses: [PEER_IP],
    iceInterfaceAddresses: { udp4: PEER_IP },
  });
  const leg: Leg & { t: RTCRtpTransceiver | null } = {
    received: 0,
    t: null,
    sendFrame(i) {
      const t = leg.t;
      if (!t || t.dtlsTransport.state !== 'connected') return;
      const opus = codec === 'opus';
      const header = new RtpHeader({
        payloadType: opus ? 111 : 0,
        sequenceNumber: i & 0xffff,
        timestamp: (i * (opus ? 960 : 160)) >>> 0,
        ssrc: t.sender.ssrc,
      });
      const payload = opus
        ? opusFrames[i % opusFrames.length]!
        : Buffer.from(pcmuFrames[i % pcmuFrames.length]!);
      void t.dtlsTransport.sendRtp(payload, header);
    },
    close: () => pc.close(),
  };
  pc.onTransceiverAdded.subscribe((t) => {
    t.onTrack.subscribe((track) =>
      track.onReceiveRtp.subscribe(() => {
        leg.received++;
      }),
    );
  });
  leg.t = pc.addTransceiver('audio', { direction: 'sendrecv' });
  await pc.setLocalDescription(await pc.createOffer());
  if (pc.iceGatheringState !== 'complete') {
    await new Promise<void>((r) => pc.iceGatheringStateChange.subscribe((s) => s === 'complete' && r()));
  }
  // Watch the state before applying the answer: ICE and DTLS can complete while
  // setRemoteDescription is still settling, and a subscription made after that misses the event.
  const states: string[] = [];
  const t0 = performance.now();
  const connected = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${id}: DTLS not up in 60 s`)), 60_000);
    pc.connectionStateChange.subscribe((s) => {
      states.push(`${s}@${Math.round(performance.now() - t0)}ms`);
      if (s === 'connected') {
        clearTimeout(timer);
        resolve();
      } else if (s === 'failed') {
        clearTimeout(timer);
        reject(
          new Error(
            `${id}: connection failed (ICE ${pc.iceConnectionState}, DTLS ${leg.t?.dtlsTransport.state}; ${states.join(' ')})`,
          ),
        );
      }
    });
  });
  engine.createEndpoint(id, { remoteSdp: pc.localDescription!.sdp });
  await pc.setRemoteDescription({ type: 'answer', sdp: await ready(id) });
  if (pc.connectionState !== 'connected')
    await connected.catch(async (err: unknown) => {
      await pc.close();
      throw err;
    });
  return leg;
}

async function plainLeg(
  engine: MediaEngine,
  id: string,
  ready: (id: string) => Promise<string>,
): Promise<Leg> {
  const socket: Socket = createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, PEER_IP, () => r()));
  const port = socket.address().port;
  const ssrc = Math.floor(Math.random() * 2 ** 32);
  const leg: Leg & { to: { address: string; port: number } | null } = {
    received: 0,
    to: null,
    sendFrame(i) {
      if (!leg.to) return;
      socket.send(
        buildRtp(0, i & 0xffff, (i * 160) >>> 0, ssrc, pcmuFrames[i % 50]!),
        leg.to.port,
        leg.to.address,
      );
    },
    close: async () => {
      socket.close();
    },
  };
  socket.on('message', () => {
    leg.received++;
  });
  engine.createEndpoint(id, {
    remoteSdp: `v=0\r\no=bench 1 1 IN IP4 ${PEER_IP}\r\ns=-\r\nc=IN IP4 ${PEER_IP}\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\na=sendrecv\r\n`,
  });
  const sdp = await ready(id);
  const m = sdp.match(/^m=audio (\d+)/m);
  leg.to = { address: '127.0.0.1', port: Number(m?.[1]) };
  return leg;
}

/** One engine under test: this checkout's, or BENCH_BASE_DIR's for an A/B in the same run. */
interface Build {
  readonly name: 'this' | 'base';
  readonly engine: MediaEngine;
  readonly events: MediaEvent[];
  readonly ready: (id: string) => Promise<string>;
  readonly prompt: string;
  /** A copy of the prompt per leg: legs that play different files share no encoded frames. */
  readonly ownPrompt: (i: number) => string;
  readonly dispose: () => Promise<void>;
}

async function startBuild(
  name: Build['name'],
  start: typeof startBenchEngine,
  ports: number,
): Promise<Build> {
  const { engine, root, dispose } = await start(`webrtc-${name}`, { min: ports, max: ports + 1999 });
  const events: MediaEvent[] = [];
  const sdps = new Map<string, (sdp: string) => void>();
  engine.subscribe((e) => {
    events.push(e);
    if (e.type === 'media.endpointReady') sdps.get(e.endpoint.endpointId)?.(e.endpoint.sdp);
    if (e.type === 'media.endpointFailed')
      process.stderr.write(`${name} endpoint failed: ${e.endpointId} ${e.message}\n`);
  });
  await engine.start();
  const prompt = join(root, 'prompt.wav');
  const promptPcm = tone(440, 5000, 6000);
  const wav = Buffer.concat([wavHeader(promptPcm.length * 2), pcmToBytes(promptPcm)]);
  await writeFile(prompt, wav);
  // Longer than a step, so no leg's frame comes round again inside the measurement.
  const longPcm = tone(440, (warmup + seconds + 5) * 1000, 6000);
  const longWav = Buffer.concat([wavHeader(longPcm.length * 2), pcmToBytes(longPcm)]);
  const copies = Math.max(...steps);
  for (let i = 0; i < copies; i++) await writeFile(join(root, `prompt-${i}.wav`), longWav);
  const ownPrompt = (i: number) => join(root, `prompt-${i}.wav`);
  const ready = (id: string): Promise<string> =>
    new Promise((resolve) => {
      sdps.set(id, resolve);
    });
  return { name, engine, events, ready, prompt, ownPrompt, dispose };
}

async function until(check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const builds: Build[] = [];
// BENCH_BASE_DIR: another checkout (e.g. a worktree of main) whose engine runs the same rows,
// interleaved with this one's, so both see the same machine load.
const baseDir = process.env.BENCH_BASE_DIR;
if (baseDir) {
  const lib = (await import(pathToFileURL(join(baseDir, 'ops/lib/bench-engine.ts')).href)) as {
    startBenchEngine: typeof startBenchEngine;
  };
  builds.push(await startBuild('base', lib.startBenchEngine, 44000));
}
builds.push(await startBuild('this', startBenchEngine, 42000));

interface Row {
  build: Build['name'];
  kind: Kind;
  legs: number;
  cpuPercent: number;
  cpuPerLeg: number;
  lateP50Ms: number;
  lateP99Ms: number;
  lateMaxMs: number;
  skippedTicks: number;
  ppsInPerLeg: number;
  ppsOutPerLeg: number;
  rssMB: number;
  loadAverage: number;
  setupRetries: number;
}
/**
 * `WebRTC Opus, own prompts`: every leg plays its own copy of the prompt, so no leg shares another's
 * encoded frames (docs/media.md): each encodes every frame, as legs carrying live audio do.
 */
type Kind = 'plain G.711' | 'WebRTC Opus' | 'WebRTC Opus, own prompts' | 'WebRTC PCMU';
const kinds = (process.env.BENCH_KINDS?.split(',') as Kind[] | undefined) ?? [
  'plain G.711',
  'WebRTC Opus',
  'WebRTC Opus, own prompts',
  'WebRTC PCMU',
];
const rows: Row[] = [];
const failures: string[] = [];
let run = 0;

async function measure(b: Build, kind: Kind, n: number): Promise<void> {
  const { engine, events, ready, prompt, ownPrompt } = b;
  run++;
  events.length = 0;
  const ids = Array.from({ length: n }, (_, i) => `bench-${run}-${i}`);
  const legs: Leg[] = [];
  // A handshake that fails on a loaded box (DTLS retransmissions run out) is tried again as a
  // new leg, as a browser would call again; retries are counted. Only the set-up is retried.
  let retried = 0;
  const makeLeg = async (i: number): Promise<Leg> => {
    for (let attempt = 0; ; attempt++) {
      const id = ids[i]!;
      try {
        return kind === 'plain G.711'
          ? await plainLeg(engine, id, ready)
          : await webrtcLeg(engine, id, ready, kind === 'WebRTC PCMU' ? 'PCMU' : 'opus');
      } catch (err) {
        if (attempt >= SETUP_RETRIES) throw err;
        engine.release(id);
        retried++;
        ids[i] = `${id}r`;
      }
    }
  };
  // Set up in batches: a DTLS handshake is CPU work on both sides. A step whose legs cannot all
  // be set up is reported as such and the run goes on.
  const setUp = await (async (): Promise<string | null> => {
    for (let i = 0; i < n; i += 10) {
      const made = await Promise.allSettled(
        Array.from({ length: Math.min(10, n - i) }, (_, k) => makeLeg(i + k)),
      );
      for (const m of made) if (m.status === 'fulfilled') legs.push(m.value);
      const failed = made.find((m) => m.status === 'rejected');
      if (failed)
        return `only ${legs.length} of ${n} legs set up: ${String((failed as PromiseRejectedResult).reason)}`;
    }
    return null;
  })();
  if (setUp !== null) {
    process.stdout.write(`${JSON.stringify({ build: b.name, kind, legs: n, failed: setUp })}\n`);
    failures.push(`| ${n} | ${b.name} | ${kind} | ${setUp} |`);
    for (const id of ids) engine.release(id);
    await Promise.all(legs.map((l) => l.close()));
    return;
  }
  playAndRecord(engine, ids, kind === 'WebRTC Opus, own prompts' ? ownPrompt : prompt);
  // The far ends send every 20 ms in 4 phases 5 ms apart, as independent phones would.
  let tick = 0;
  const start = performance.now();
  let timer: NodeJS.Timeout | null = null;
  const step = (): void => {
    const due = Math.floor((performance.now() - start) / 5) + 1;
    while (tick < due) {
      const phase = tick % 4;
      for (let i = phase; i < legs.length; i += 4) legs[i]!.sendFrame(Math.floor(tick / 4));
      tick++;
    }
    timer = setTimeout(step, Math.max(0, start + tick * 5 - performance.now()));
  };
  step();
  await new Promise((r) => setTimeout(r, warmup * 1000));
  await engine.load();
  const before = await Promise.all(ids.map((id) => engine.stats(id)));
  const receivedBefore = legs.reduce((s, l) => s + l.received, 0);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const load = await engine.load();
  const elapsed = (performance.now() - t0) / 1000;
  const after = await Promise.all(ids.map((id) => engine.stats(id)));
  const receivedAfter = legs.reduce((s, l) => s + l.received, 0);
  if (timer) clearTimeout(timer);
  let packetsIn = 0;
  after.forEach((s, i) => {
    packetsIn += (s?.packetsIn ?? 0) - (before[i]?.packetsIn ?? 0);
  });
  for (const id of ids) engine.release(id);
  await until(() => events.filter((e) => e.type === 'media.released').length >= n + retried);
  await until(
    () => events.filter((e) => e.type === 'media.recordDone' || e.type === 'media.recordFailed').length >= n,
  );
  await Promise.all(legs.map((l) => l.close()));
  const row: Row = {
    build: b.name,
    kind,
    legs: n,
    cpuPercent: load.cpuPercent,
    cpuPerLeg: Number((load.cpuPercent / n).toFixed(3)),
    lateP50Ms: load.tickLateP50Ms,
    lateP99Ms: load.tickLateP99Ms,
    lateMaxMs: load.tickLateMaxMs,
    skippedTicks: load.skippedTicks,
    ppsInPerLeg: Number((packetsIn / elapsed / n).toFixed(1)),
    ppsOutPerLeg: Number(((receivedAfter - receivedBefore) / elapsed / n).toFixed(1)),
    rssMB: Math.round(load.rssBytes / 1024 / 1024),
    loadAverage: Number(loadavg()[0]!.toFixed(2)),
    setupRetries: retried,
  };
  if (load.ticks === 0) {
    // The load query timed out (2 s): the engine or this process was starved, nothing was measured.
    failures.push(`| ${n} | ${b.name} | ${kind} | the engine did not answer the load query |`);
    process.stdout.write(`${JSON.stringify({ build: b.name, kind, legs: n, failed: 'no load figures' })}\n`);
    return;
  }
  rows.push(row);
  process.stdout.write(`${JSON.stringify(row)}\n`);
}

for (const n of steps) for (const kind of kinds) for (const b of builds) await measure(b, kind, n);

process.stdout.write(
  '\n| legs | build | kind | engine CPU % of one core | per leg | × plain | tick late p50 / p99 / max (ms) | skipped ticks | pps in / out per leg | RSS |\n',
);
process.stdout.write('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n');
for (const r of rows) {
  const plain = rows.find((p) => p.legs === r.legs && p.build === r.build && p.kind === 'plain G.711');
  const ratio = plain && plain.cpuPerLeg > 0 ? (r.cpuPerLeg / plain.cpuPerLeg).toFixed(1) : 'n/a';
  process.stdout.write(
    `| ${r.legs} | ${r.build} | ${r.kind} | ${r.cpuPercent} | ${r.cpuPerLeg} % | ${ratio} | ${r.lateP50Ms} / ${r.lateP99Ms} / ${r.lateMaxMs} | ${r.skippedTicks} | ${r.ppsInPerLeg} / ${r.ppsOutPerLeg} | ${r.rssMB} MB |\n`,
  );
}
if (failures.length > 0)
  process.stdout.write(
    `\n| legs | build | kind | not measured |\n| --- | --- | --- | --- |\n${failures.join('\n')}\n`,
  );
for (const b of builds) await b.dispose();
process.exit(0);
