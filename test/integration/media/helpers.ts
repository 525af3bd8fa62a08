/**
 * Test support for the media engine: a real engine process on 127.0.0.1 with an ephemeral RTP
 * port range, an event log with bounded waits, and Node RTP peers on other loopback addresses.
 */

import { createSocket, type Socket } from 'node:dgram';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { buildTelephoneEvent, digitToEvent } from '../../../src/media/engine/dtmf.js';
import { decodeG711, encodeG711 } from '../../../src/media/engine/g711.js';
import { tone } from '../../../src/media/engine/pcm.js';
import { buildRtp, parseRtp } from '../../../src/media/engine/rtp.js';
import { MediaEngine } from '../../../src/media/media-engine.js';
import type { Codec, EndpointInfo, MediaEvent } from '../../../src/media/port.js';
import { LocalRecordingStorage } from '../../../src/recordings/storage.js';

/** Collects events; `waitFor` resolves with the first (past or future) match or rejects on timeout. */
export class EventLog {
  readonly events: MediaEvent[] = [];
  private waiters: { match: (e: MediaEvent) => boolean; resolve: (e: MediaEvent) => void }[] = [];

  push = (e: MediaEvent): void => {
    this.events.push(e);
    for (const w of [...this.waiters]) {
      if (w.match(e)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(e);
      }
    }
  };

  waitFor<T extends MediaEvent['type']>(
    type: T,
    match: (e: Extract<MediaEvent, { type: T }>) => boolean = () => true,
    timeoutMs = 10_000,
  ): Promise<Extract<MediaEvent, { type: T }>> {
    const m = (e: MediaEvent): boolean => e.type === type && match(e as Extract<MediaEvent, { type: T }>);
    const seen = this.events.find(m);
    if (seen) return Promise.resolve(seen as Extract<MediaEvent, { type: T }>);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.match !== m);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${type}`));
      }, timeoutMs);
      this.waiters.push({
        match: m,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e as Extract<MediaEvent, { type: T }>);
        },
      });
    });
  }

  count(type: MediaEvent['type'], match: (e: MediaEvent) => boolean = () => true): number {
    return this.events.filter((e) => e.type === type && match(e)).length;
  }
}

export interface TestEngine {
  readonly engine: MediaEngine;
  readonly log: EventLog;
  readonly storage: LocalRecordingStorage;
  readonly recordingsDir: string;
  readonly cacheDir: string;
  /** Creates an endpoint and waits for it. */
  endpoint(id: string, remoteSdp?: string): Promise<EndpointInfo>;
  close(): Promise<void>;
}

let portBlock = 0;

/** Starts an engine on 127.0.0.1 with a private RTP port range. */
export async function startEngine(
  o: {
    maxDownloadBytes?: number;
    cacheMaxBytes?: number;
    blockPrivateUrls?: boolean;
    urlTimeoutMs?: number;
    webrtcCodecs?: readonly ('opus' | 'PCMU' | 'PCMA')[];
  } = {},
): Promise<TestEngine> {
  const root = await mkdtemp(join(tmpdir(), 'media-test-'));
  const cacheDir = join(root, 'cache');
  const recordingsDir = join(root, 'recordings');
  // A range per engine, spread by pid so parallel test files rarely collide (binding skips busy ports).
  const base = 30_000 + ((process.pid * 7 + portBlock++ * 3) % 100) * 200;
  const storage = new LocalRecordingStorage(recordingsDir);
  const engine = new MediaEngine({
    media: {
      rtpHost: '127.0.0.1',
      rtpPortMin: base,
      rtpPortMax: base + 199,
      cacheDir,
      cacheMaxBytes: o.cacheMaxBytes ?? 64 * 1024 * 1024,
      maxDownloadBytes: o.maxDownloadBytes ?? 5 * 1024 * 1024,
      webrtcCodecs: o.webrtcCodecs,
    },
    storage,
    blockPrivateUrls: o.blockPrivateUrls ?? false,
    urlTimeoutMs: o.urlTimeoutMs,
    logger: pino({ level: process.env.LOG_LEVEL ?? 'silent' }),
    engineLogLevel: process.env.LOG_LEVEL ?? 'error',
  });
  const log = new EventLog();
  engine.subscribe(log.push);
  await engine.start();
  return {
    engine,
    log,
    storage,
    recordingsDir,
    cacheDir,
    async endpoint(id, remoteSdp) {
      engine.createEndpoint(id, remoteSdp === undefined ? undefined : { remoteSdp });
      const e = await Promise.race([
        log.waitFor('media.endpointReady', (x) => x.endpoint.endpointId === id),
        log
          .waitFor('media.endpointFailed', (x) => x.endpointId === id)
          .then((f) => {
            throw new Error(`endpoint ${id} failed: ${f.reason} ${f.message}`);
          }),
      ]);
      return e.endpoint;
    },
    async close() {
      await engine.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export interface ReceivedPacket {
  readonly at: number;
  readonly pt: number;
  readonly seq: number;
  readonly ts: number;
  readonly marker: boolean;
  readonly payload: Uint8Array;
}

/** A Node RTP peer: sends PCM (or DTMF) to an endpoint at 20 ms, records what it receives. */
export class RtpPeer {
  readonly received: ReceivedPacket[] = [];
  private seq = 1000;
  private ts = 5000;
  private readonly ssrc = Math.floor(Math.random() * 2 ** 32);
  private timer: NodeJS.Timeout | null = null;
  private target: { address: string; port: number } | null = null;

  private constructor(
    readonly socket: Socket,
    readonly address: string,
    readonly port: number,
    readonly codec: Codec,
  ) {
    socket.on('message', (msg) => {
      const p = parseRtp(msg);
      if (p)
        this.received.push({
          ts: p.timestamp,
          marker: p.marker,
          at: performance.now(),
          pt: p.payloadType,
          seq: p.sequence,
          payload: Uint8Array.from(p.payload),
        });
    });
  }

  static async open(address = '127.0.0.2', codec: Codec = 'PCMU'): Promise<RtpPeer> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, address, () => resolve());
    });
    return new RtpPeer(socket, address, socket.address().port, codec);
  }

  /** An SDP offer for this peer (PCMU or PCMA plus telephone-event 101). */
  sdp(payloads = this.codec === 'PCMU' ? '0 101' : '8 101'): string {
    const lines = [
      'v=0',
      `o=peer 1 1 IN IP4 ${this.address}`,
      's=peer',
      `c=IN IP4 ${this.address}`,
      't=0 0',
      `m=audio ${this.port} RTP/AVP ${payloads}`,
      'a=rtpmap:0 PCMU/8000',
      'a=rtpmap:8 PCMA/8000',
      'a=rtpmap:101 telephone-event/8000',
      'a=fmtp:101 0-16',
      'a=ptime:20',
      'a=sendrecv',
    ];
    return `${lines.join('\r\n')}\r\n`;
  }

  sendTo(ep: { address: string; port: number }): void {
    this.target = { address: ep.address, port: ep.port };
  }

  /** Sends one raw datagram (bad-input tests). */
  sendRaw(buf: Uint8Array): void {
    this.socket.send(buf, this.target!.port, this.target!.address);
  }

  /** Starts streaming `pcm` (looped, or once then silence) as 20 ms packets until `stopStreaming`. */
  stream(pcm: Int16Array, loop = true): void {
    this.stopStreaming();
    let pos = 0;
    const start = performance.now();
    let n = 0;
    const frame = new Int16Array(160);
    const step = (): void => {
      const due = Math.floor((performance.now() - start) / 20) + 1;
      while (n < due) {
        for (let i = 0; i < 160; i++) {
          // Once a non-looped sound is over, the stream goes on with silence.
          frame[i] = loop || pos < pcm.length ? pcm[pos % pcm.length]! : 0;
          pos = loop ? (pos + 1) % pcm.length : pos + 1;
        }
        this.sendRaw(
          buildRtp(
            this.codec === 'PCMU' ? 0 : 8,
            this.seq++,
            this.ts,
            this.ssrc,
            encodeG711(this.codec, frame),
          ),
        );
        this.ts += 160;
        n++;
      }
      this.timer = setTimeout(step, 20 - ((performance.now() - start) % 20));
    };
    step();
  }

  stopStreaming(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** One received packet decoded. */
  decodedOne(p: ReceivedPacket): Int16Array {
    return decodeG711(p.pt === 8 ? 'PCMA' : 'PCMU', p.payload);
  }

  /** Sends an RFC 4733 event as a start packet, two updates and three end packets (§2.5.1.4). */
  sendDtmf(digit: string): void {
    const event = digitToEvent(digit)!;
    const ts = this.ts;
    this.ts += 960;
    const packets = [
      buildTelephoneEvent(event, false, 160),
      buildTelephoneEvent(event, false, 320),
      buildTelephoneEvent(event, false, 480),
      buildTelephoneEvent(event, true, 640),
      buildTelephoneEvent(event, true, 640),
      buildTelephoneEvent(event, true, 640),
    ];
    packets.forEach((payload, i) => {
      this.sendRaw(buildRtp(101, this.seq++, ts, this.ssrc, payload, i === 0));
    });
  }

  /** Audio received after `since` (performance.now), decoded in arrival order. */
  decoded(since = 0, codec: Codec = this.codec): Int16Array {
    const pkts = this.received.filter((p) => p.at >= since && (p.pt === 0 || p.pt === 8));
    const out = new Int16Array(pkts.reduce((n, p) => n + p.payload.length, 0));
    let o = 0;
    for (const p of pkts) {
      out.set(
        decodeG711(p.pt === 0 ? 'PCMU' : codec === 'PCMA' || p.pt === 8 ? 'PCMA' : codec, p.payload),
        o,
      );
      o += p.payload.length;
    }
    return out;
  }

  close(): void {
    this.stopStreaming();
    this.socket.close();
  }
}

/** Waits until `check()` is true, polling; rejects after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Goertzel power of `freq` in `pcm` (8 kHz), normalised per sample. */
export function tonePower(pcm: Int16Array, freq: number): number {
  const w = (2 * Math.PI * freq) / 8000;
  const coeff = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < pcm.length; i++) {
    const s0 = pcm[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  return power / (pcm.length * pcm.length);
}

/** RMS of PCM. */
export function rmsOf(pcm: Int16Array): number {
  let s = 0;
  for (let i = 0; i < pcm.length; i++) s += pcm[i]! * pcm[i]!;
  return pcm.length === 0 ? 0 : Math.sqrt(s / pcm.length);
}

/** Whether `freq` is clearly present in `pcm` (against an absent reference frequency). */
export const hears = (pcm: Int16Array, freq: number) => tonePower(pcm, freq) > 50 * tonePower(pcm, 3300);

/** What `peer` heard during the next `ms`, starting a little after now. */
export async function heardNext(peer: RtpPeer, ms: number): Promise<Int16Array> {
  const since = performance.now() + 100;
  await new Promise((r) => setTimeout(r, 100 + ms));
  return peer.decoded(since);
}

/** Sends `freq` back to where the service's RTP comes from (its endpoint), once it starts. */
export function answerWithTone(peer: RtpPeer, freq: number): Promise<void> {
  return new Promise((resolve) => {
    peer.socket.once('message', (_m, from) => {
      peer.sendTo({ address: from.address, port: from.port });
      peer.stream(tone(freq, 1000));
      resolve();
    });
  });
}
