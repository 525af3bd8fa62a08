/**
 * Starts Kamailio as the SIP front of a set of nodes (ops/kamailio/switchboard.cfg): unprivileged,
 * in the foreground, with its dispatcher list and runtime folder in a temporary directory. Resolves
 * once it answers an OPTIONS on its socket; a missing binary rejects with the install command.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawned } from './tools.js';

export const KAMAILIO_CFG = resolve(import.meta.dirname, '../kamailio/switchboard.cfg');

export interface KamailioOptions {
  /** Address and UDP port Kamailio listens on (its own loopback address keeps clear of the nodes). */
  readonly host: string;
  readonly port: number;
  /** The nodes' SIP addresses, `HOST:PORT`. */
  readonly nodes: readonly string[];
  /** Seconds between OPTIONS probes of each node. */
  readonly pingIntervalSeconds?: number;
  /** Milliseconds a forwarded request waits for a reply before failing over. */
  readonly frTimerMs?: number;
  /** Shared memory, MB (a finished transaction holds ~15 KB for 5 s). */
  readonly shmMb?: number;
}

export interface Kamailio {
  readonly child: ChildProcess;
  readonly host: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** True once something at host:port answers a SIP OPTIONS (any status). */
async function answersOptions(host: string, port: number, timeoutMs: number): Promise<boolean> {
  const socket = createSocket('udp4');
  try {
    await new Promise<void>((r) => socket.bind(0, '127.0.0.1', () => r()));
    const local = socket.address().port;
    const callId = `probe-${Date.now()}-${Math.random()}`;
    const msg = [
      `OPTIONS sip:${host}:${port} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK${Date.now()}`,
      'Max-Forwards: 70',
      `From: <sip:probe@127.0.0.1>;tag=probe`,
      `To: <sip:${host}:${port}>`,
      `Call-ID: ${callId}`,
      'CSeq: 1 OPTIONS',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    const answer = once(socket, 'message').then(() => true);
    socket.send(msg, port, host);
    const timeout = new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs));
    return await Promise.race([answer, timeout]);
  } finally {
    socket.close();
  }
}

export async function startKamailio(o: KamailioOptions): Promise<Kamailio> {
  const dir = mkdtempSync(join(tmpdir(), 'kamailio-'));
  const list = join(dir, 'dispatcher.list');
  writeFileSync(list, `${o.nodes.map((n) => `1 sip:${n}`).join('\n')}\n`);
  const args = [
    '-DD',
    '-E',
    '-f',
    KAMAILIO_CFG,
    '-Y',
    dir,
    '-m',
    String(o.shmMb ?? 256),
    '-A',
    `LISTEN=udp:${o.host}:${o.port}`,
    '-A',
    `DISPATCHER_LIST="${list}"`,
    '-A',
    `PING_INTERVAL=${o.pingIntervalSeconds ?? 1}`,
    '-A',
    `FR_TIMER=${o.frTimerMs ?? 1000}`,
  ];
  let stderr = '';
  const child = spawn('kamailio', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    await spawned(child, 'kamailio');
  } catch (e) {
    cleanup();
    throw e;
  }
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    cleanup();
  };
  for (let i = 0; i < 50; i++) {
    if (child.exitCode !== null) break;
    if (await answersOptions(o.host, o.port, 200)) return { child, host: o.host, port: o.port, stop };
  }
  await stop();
  throw new Error(`kamailio did not start on ${o.host}:${o.port}: ${stderr.trim().slice(-1000)}`);
}
