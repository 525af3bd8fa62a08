/**
 * Kamailio as bench:sip's reference registrar (ops/kamailio/registrar.cfg): started in the
 * foreground on its own loopback address, unprivileged, stopped by its pid. `startKamailio` returns
 * null with the install command when Kamailio is not on PATH, so the bench reports it and goes on
 * rather than waiting.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { which } from '../lib/prerequisites.js';
import { aptInstallCommand } from '../lib/tools.js';
import { childPids, cpuSeconds, ROOT } from './support.js';

export const KAMAILIO_IP = '127.0.0.5';

export interface Kamailio {
  readonly child: ChildProcess;
  readonly port: number;
  /** CPU seconds of Kamailio's processes (main and its workers) so far. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

export const KAMAILIO_MISSING = `kamailio is not installed: ${aptInstallCommand(['kamailio'])} (Debian package; the base package has every module the bench uses)`;

/** Starts Kamailio's registrar on KAMAILIO_IP:`port`; null when Kamailio is not installed. */
export async function startKamailio(port: number, children = 2): Promise<Kamailio | null> {
  const bin = which('kamailio', process.env.PATH) ?? which('kamailio', '/usr/sbin:/sbin');
  if (!bin) return null;
  const run = mkdtempSync(join(tmpdir(), 'bench-kamailio-'));
  chmodSync(run, 0o777);
  const root = process.getuid?.() === 0;
  const child = spawn(
    bin,
    [
      '-DD',
      '-E',
      '-f',
      join(ROOT, 'ops/kamailio/registrar.cfg'),
      '-Y',
      run,
      '-m',
      '256',
      '-A',
      `LISTEN=udp:${KAMAILIO_IP}:${port}`,
      '-A',
      `CHILDREN=${children}`,
      ...(root ? ['-u', 'nobody', '-g', 'nogroup'] : []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  const failed = new Promise<never>((_, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`kamailio exited (${code}): ${stderr}`)));
  });
  failed.catch(() => {});
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(run, { recursive: true, force: true });
  };
  try {
    await Promise.race([answers(port), failed]);
  } catch (e) {
    await stop();
    throw e;
  }
  const pid = child.pid as number;
  return {
    child,
    port,
    cpuSeconds: () =>
      [pid, ...childPids(pid)].reduce((sum, p) => {
        try {
          return sum + cpuSeconds(p);
        } catch {
          return sum; // exited meanwhile
        }
      }, 0),
    stop,
  };
}

/** Resolves once an OPTIONS to the registrar gets any answer (it refuses it with 405); ≤ 10 s. */
async function answers(port: number): Promise<void> {
  const socket = createSocket('udp4');
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.bind(0, KAMAILIO_IP, resolve));
  const local = socket.address().port;
  const got = once(socket, 'message');
  try {
    for (let i = 0; i < 50; i++) {
      const options = [
        `OPTIONS sip:${KAMAILIO_IP}:${port} SIP/2.0`,
        `Via: SIP/2.0/UDP ${KAMAILIO_IP}:${local};branch=z9hG4bK-probe${i}`,
        'Max-Forwards: 70',
        `From: <sip:probe@${KAMAILIO_IP}>;tag=probe`,
        `To: <sip:probe@${KAMAILIO_IP}>`,
        'Call-ID: bench-kamailio-probe',
        `CSeq: ${i + 1} OPTIONS`,
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n');
      socket.send(options, port, KAMAILIO_IP);
      const answered = await Promise.race([
        got.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 200)),
      ]);
      if (answered) return;
    }
    throw new Error(`kamailio did not answer on ${KAMAILIO_IP}:${port} within 10 s`);
  } finally {
    socket.close();
  }
}
