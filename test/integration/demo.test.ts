/**
 * `npm run demo` as a user runs it (its entry, src/cli/demo.ts, as a child process on a private HTTP
 * port, SIP port, database and Redis prefix), on a PATH without espeak-ng and sox like a fresh
 * machine: it prints its "try it" block; every printed REST example works when pasted into bash;
 * sipp calls the demo number and the call is answered, the greeting is heard (RTP with speech
 * energy reaches the caller's SDP address), the digit sent as RFC 4733 is gathered (the IVR reports
 * it), and the call record ends `completed`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { which } from '../../ops/lib/prerequisites.js';
import { TRY_IT_BEGIN, TRY_IT_END } from '../../src/cli/demo/try-it.js';
import { decodeG711 } from '../../src/media/engine/g711.js';
import { Baresip } from '../support/baresip.js';
import { createNamespace, type TestNamespace } from '../support/namespace.js';
import { freePort, runSipp } from '../support/sipp.js';
import { until } from '../support/until.js';

const ROOT = resolve(import.meta.dirname, '../..');
const NUMBER = '+15550100001';

let ns: TestNamespace;
let scratch: string;
let demo: ChildProcess;
let output = '';
let httpPort: number;
let sipPort: number;
let block = '';

/** Waits until the demo's output matches `re` (bounded), failing early if the process exits. */
async function waitForOutput(re: RegExp, ms: number): Promise<RegExpExecArray> {
  const end = Date.now() + ms;
  for (;;) {
    const m = re.exec(output);
    if (m) return m;
    if (demo.exitCode !== null) throw new Error(`demo exited (${demo.exitCode}):\n${output}`);
    if (Date.now() > end) throw new Error(`demo output never matched ${re}:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  ns = await createNamespace('demo');
  scratch = await mkdtemp(join(tmpdir(), 'sb-demo-'));
  // A fresh machine's PATH: node, but no espeak-ng or sox (the greeting must not need them).
  const bin = join(scratch, 'bin');
  await mkdir(bin);
  await symlink(process.execPath, join(bin, 'node'));
  httpPort = await freePort('127.0.0.1');
  sipPort = await freePort('127.0.0.1');
  demo = spawn(process.execPath, ['--import', 'tsx', 'src/cli/demo.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PATH: bin,
      LOG_LEVEL: 'warn',
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(httpPort),
      SIP_HOST: '127.0.0.1',
      SIP_PORT: String(sipPort),
      DATABASE_URL: ns.databaseUrl,
      REDIS_URL: ns.redisUrl,
      REDIS_PREFIX: ns.redisPrefix,
      RECORDINGS_DIR: join(scratch, 'recordings'),
      MEDIA_CACHE_DIR: join(scratch, 'media-cache'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  demo.stdout?.on('data', (d) => {
    output += d;
  });
  demo.stderr?.on('data', (d) => {
    output += d;
  });
  const m = await waitForOutput(new RegExp(`${TRY_IT_BEGIN}\\n([\\s\\S]*?)${TRY_IT_END}`), 60_000);
  block = m[1] as string;
}, 90_000);

afterAll(async () => {
  if (demo?.pid && demo.exitCode === null) {
    const exited = new Promise((r) => demo.once('exit', r));
    process.kill(demo.pid, 'SIGTERM');
    const done = await Promise.race([
      exited.then(() => true),
      new Promise((r) => setTimeout(r, 10_000, false)),
    ]);
    if (!done && demo.exitCode === null) process.kill(demo.pid, 'SIGKILL');
  }
  await ns?.dispose();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** The printed curl commands, continuation lines joined, as a shell would read them. */
function printedCurls(text: string): string[] {
  const joined = text.replace(/\\\n\s*/g, '');
  return joined
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('curl '));
}

/** The account sid and AuthToken the block prints in its examples. */
function credentials(text: string): { sid: string; token: string } {
  const m = /-u '?(AC[0-9a-f]{32}):([0-9a-f]+)'?/.exec(text);
  if (!m) throw new Error(`no credentials in the try-it block:\n${text}`);
  return { sid: m[1] as string, token: m[2] as string };
}

/** A UDP socket standing in for the caller's audio device: keeps what the service sends. */
async function rtpReceiver(ip: string): Promise<{ socket: Socket; port: number; payloads: Buffer[] }> {
  const socket = createSocket('udp4');
  const payloads: Buffer[] = [];
  socket.on('message', (msg) => {
    // RTP version 2, payload type 0 (PCMU); 12-byte header plus CSRCs.
    if (msg.length > 12 && msg[0]! >> 6 === 2 && (msg[1]! & 0x7f) === 0)
      payloads.push(msg.subarray(12 + (msg[0]! & 0x0f) * 4));
  });
  await new Promise<void>((r) => socket.bind(0, ip, r));
  return { socket, port: socket.address().port, payloads };
}

/** Runs `command` in bash as a user pasting it would (bounded: killed after 60 s). */
function bash(command: string): Promise<{ code: number | null; out: string }> {
  return new Promise((res) => {
    const child = spawn('bash', ['-c', command], { cwd: scratch, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    const timer = setTimeout(() => child.pid && process.kill(child.pid, 'SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      res({ code, out: out.trim() });
    });
  });
}

const basicAuth = (sid: string, token: string): string =>
  `Basic ${Buffer.from(`${sid}:${token}`).toString('base64')}`;

const rms = (pcm: Int16Array): number =>
  Math.sqrt(pcm.reduce((s, v) => s + v * v, 0) / Math.max(1, pcm.length));

describe('npm run demo', () => {
  it('prints a try-it block with a sipp command and a baresip recipe for the demo number', () => {
    expect(block).toContain(`sipp -sn uac -s ${NUMBER} -i 127.0.0.2 -m 1 -d 8000 127.0.0.1:${sipPort}`);
    expect(block).toContain(`<sip:alice@127.0.0.1:${sipPort};transport=udp>;auth_pass=alice-password`);
    expect(block).toContain(`/dial ${NUMBER}`);
    // Without espeak-ng the demo says how its greeting is played and how to get speech.
    expect(output).toMatch(/espeak-ng\/sox not installed: the greeting is a bundled recording/);
  });

  it('the printed sipp command places a call that is answered and completes', async () => {
    const line = block.split('\n').find((l) => l.trim().startsWith('sipp '));
    expect(line).toBeDefined();
    // As pasted, plus -nostdin (no terminal here); bounded by sipp's own -timeout.
    const r = await bash(`${(line as string).trim()} -nostdin -timeout 40s -timeout_error`);
    expect(r).toMatchObject({ code: 0 });
    const { sid, token } = credentials(block);
    const calls = await until(
      async () => {
        const res = await fetch(
          `http://127.0.0.1:${httpPort}/2012-04-24/Accounts/${sid}/Calls.json?To=${encodeURIComponent(NUMBER)}`,
          { headers: { authorization: basicAuth(sid, token) } },
        );
        return ((await res.json()) as { calls: { status: string; from: string }[] }).calls;
      },
      (c) => c.some((x) => x.status === 'completed'),
      15_000,
    );
    expect(calls.map((c) => c.status)).toContain('completed');
  }, 60_000);

  it('the printed baresip recipe registers alice and her /dial reaches the IVR', async () => {
    const account = /<(sip:[^>]+)>;auth_pass=(\S+)/.exec(block);
    const dial = /\/dial (\S+)/.exec(block);
    expect(account && dial).toBeTruthy();
    const phone = new Baresip({
      aor: account![1] as string,
      password: account![2] as string,
      regint: 600,
      maxSeconds: 60,
    });
    const answered = (output.match(/demo IVR: call CA[0-9a-f]{32} answered/g) ?? []).length;
    try {
      await phone.start();
      // Registered (it may happen before the control connection is up, so ask rather than wait).
      const reg = await until(
        () => phone.command('reginfo'),
        (r) => /OK[\s\S]*Expires [1-9]/.test(String(r.data)),
        10_000,
      );
      expect(String(reg.data)).toMatch(/OK[\s\S]*Expires [1-9]/);

      // What the user types after "/dial", given to baresip's own dial command.
      await phone.command('dial', dial![1] as string);
      await phone.waitForEvent('CALL_ESTABLISHED', 15_000);
      await waitForOutput(
        new RegExp(`(demo IVR: call CA[0-9a-f]{32} answered[\\s\\S]*){${answered + 1}}`),
        10_000,
      );
      await phone.command('hangup');
      await phone.waitForEvent('CALL_CLOSED', 10_000);
    } finally {
      await phone.stop();
    }
  }, 60_000);

  it('every printed REST example works when pasted into bash', async () => {
    const curls = printedCurls(block);
    expect(curls.length).toBeGreaterThanOrEqual(5);
    const curl = which('curl', process.env.PATH);
    expect(curl).not.toBeNull();
    for (const command of curls) {
      const r = await bash(`${command} -sS -o /dev/null -w '%{http_code}'`);
      expect({ command, ...r }).toMatchObject({ code: 0, out: expect.stringMatching(/^20[01]$/) });
    }
    // The SMS example's From kept its '+' (with -d it would arrive as a space).
    const { sid, token } = credentials(block);
    const auth = basicAuth(sid, token);
    const list = await fetch(`http://127.0.0.1:${httpPort}/2012-04-24/Accounts/${sid}/SMS/Messages.json`, {
      headers: { authorization: auth },
    });
    const body = (await list.json()) as { messages?: { from: string }[]; sms_messages?: { from: string }[] };
    const messages = body.messages ?? body.sms_messages ?? [];
    expect(messages.map((m) => m.from)).toContain(NUMBER);
  });

  it('a sipp call to the demo number is answered, hears the greeting, has its key gathered and completes', async () => {
    const rtp = await rtpReceiver('127.0.0.5');
    try {
      const r = await runSipp({
        scenario: 'uac-call-rtp-to-key-dtmf-1-expect-bye.xml',
        remote: `127.0.0.1:${sipPort}`,
        service: NUMBER,
        localIp: '127.0.0.2',
        keys: { rtp_ip: '127.0.0.5', rtp_port: String(rtp.port) },
        extra: ['-mi', '127.0.0.2', '-mp', String(await freePort('127.0.0.2'))],
        timeoutSeconds: 60,
      });
      expect(r.errors).toBe('');
      expect(r.code).toBe(0);
    } finally {
      rtp.socket.close();
    }
    // The greeting: 20 ms PCMU packets, and at least a second of them carrying speech.
    const frames = rtp.payloads.map((p) => decodeG711('PCMU', p));
    const speaking = frames.filter((f) => rms(f) > 300);
    expect(frames.length).toBeGreaterThan(100);
    expect(speaking.length).toBeGreaterThan(50);

    await waitForOutput(/demo IVR: call (CA[0-9a-f]{32}) pressed 1\b/, 10_000);
    const callSid = (/demo IVR: call (CA[0-9a-f]{32}) pressed 1\b/.exec(output) as RegExpExecArray)[1];
    const { sid, token } = credentials(block);
    const auth = basicAuth(sid, token);
    const call = await until(
      async () => {
        const res = await fetch(
          `http://127.0.0.1:${httpPort}/2012-04-24/Accounts/${sid}/Calls/${callSid}.json`,
          { headers: { authorization: auth } },
        );
        return (await res.json()) as { status: string; to: string; direction: string };
      },
      (c) => c.status === 'completed',
      15_000,
    );
    expect(call).toMatchObject({ status: 'completed', to: NUMBER, direction: 'inbound' });
  }, 90_000);
});
