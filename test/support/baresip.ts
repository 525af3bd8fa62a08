/**
 * Runs baresip (Debian) as a realistic SIP user agent: a private config directory, one account,
 * G.711 only, audio from a WAV file, and ctrl_tcp (JSON netstrings) to command it and read its
 * events. Binds a 127.0.0.x address other than the service's, on free ports; stops by itself (-t)
 * and is ended by its PID.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePortBlock } from '../../ops/lib/ports.js';
import { spawned } from '../../ops/lib/tools.js';

const MODULES = '/usr/lib/baresip/modules';

export interface BaresipOptions {
  /** The account line's AOR, e.g. `sip:alice@127.0.0.1:5080;transport=udp`. */
  readonly aor: string;
  readonly password: string;
  /** Registration interval (requested Expires), seconds; 0 = do not register. */
  readonly regint?: number;
  /** `auto` answers incoming calls. */
  readonly answermode?: 'auto' | 'manual';
  /** WAV played as the microphone. */
  readonly audioSource?: string;
  readonly localIp?: string;
  /** Quit after this many seconds whatever happens. */
  readonly maxSeconds?: number;
}

export interface BaresipEvent {
  readonly type: string;
  readonly class?: string;
  readonly param?: string;
  readonly [k: string]: unknown;
}

export class Baresip {
  private child: ChildProcess | null = null;
  private ctrl: Socket | null = null;
  private dir = '';
  private output = '';
  private buffer = '';
  private token = 0;
  readonly events: BaresipEvent[] = [];
  private readonly pending = new Map<string, (r: Record<string, unknown>) => void>();
  localPort = 0;
  exited: Promise<number | null> = Promise.resolve(null);

  constructor(private readonly o: BaresipOptions) {}

  get log(): string {
    return this.output;
  }

  async start(): Promise<void> {
    const ip = this.o.localIp ?? '127.0.0.3';
    // SIP (and TLS on SIP + 1), ctrl_tcp and 10 RTP ports: one block of free ports.
    const base = await freePortBlock(ip, 14);
    this.localPort = base;
    const ctrlPort = base + 2;
    const rtp = base + 4;
    this.dir = await mkdtemp(join(tmpdir(), 'baresip-'));
    const config = [
      `sip_listen ${ip}:${this.localPort}`,
      `audio_player aubridge,nil`,
      `audio_source ${this.o.audioSource ? `aufile,${this.o.audioSource}` : 'aubridge,nil'}`,
      `audio_alert aubridge,nil`,
      `module_path ${MODULES}`,
      'module g711.so',
      'module aufile.so',
      'module aubridge.so',
      'module_app account.so',
      'module_app menu.so',
      'module_app ctrl_tcp.so',
      `ctrl_tcp_listen ${ip}:${ctrlPort}`,
      `rtp_ports ${rtp}-${rtp + 9}`,
      'sip_trans_def udp',
    ].join('\n');
    const params = [`auth_pass=${this.o.password}`, `regint=${this.o.regint ?? 0}`];
    params.push(`answermode=${this.o.answermode ?? 'manual'}`, 'audio_codecs=PCMU,PCMA');
    await writeFile(join(this.dir, 'config'), `${config}\n`);
    await writeFile(join(this.dir, 'accounts'), `<${this.o.aor}>;${params.join(';')}\n`);
    await writeFile(join(this.dir, 'contacts'), '');
    const child = spawn('baresip', ['-f', this.dir, '-t', String(this.o.maxSeconds ?? 60)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout?.on('data', (d) => {
      this.output += d;
    });
    child.stderr?.on('data', (d) => {
      this.output += d;
    });
    this.exited = new Promise((res) => child.on('close', (code) => res(code)));
    // Not installed: reject now rather than polling a control port nobody will open.
    await spawned(child, 'baresip').catch(async (err) => {
      this.child = null;
      await rm(this.dir, { recursive: true, force: true });
      throw err;
    });
    // ctrl_tcp comes up shortly after start.
    const end = Date.now() + 5000;
    while (!this.ctrl && Date.now() < end) {
      this.ctrl = await new Promise<Socket | null>((res) => {
        const s = connect({ host: ip, port: ctrlPort });
        s.once('connect', () => res(s));
        s.once('error', () => res(null));
      });
      if (!this.ctrl) await new Promise((r) => setTimeout(r, 100));
    }
    if (!this.ctrl) throw new Error(`baresip ctrl_tcp did not come up:\n${this.output}`);
    this.ctrl.setEncoding('utf8');
    this.ctrl.on('data', (d: string) => this.onCtrl(d));
    this.ctrl.on('error', () => {});
  }

  /** Sends a ctrl_tcp command (e.g. `dial`, `hangup`, `reginfo`) and waits for its response. */
  command(command: string, params = ''): Promise<Record<string, unknown>> {
    const token = String(++this.token);
    const json = JSON.stringify({ command, params, token });
    return new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`baresip: no response to ${command}`)), 5000);
      this.pending.set(token, (r) => {
        clearTimeout(timer);
        res(r);
      });
      this.ctrl?.write(`${Buffer.byteLength(json)}:${json},`);
    });
  }

  /** Waits for an event of `type` (e.g. `CALL_ESTABLISHED`), counting those already seen. */
  async waitForEvent(type: string, ms = 10_000, nth = 1): Promise<BaresipEvent> {
    const end = Date.now() + ms;
    for (;;) {
      const found = this.events.filter((e) => e.type === type);
      if (found.length >= nth) return found[nth - 1] as BaresipEvent;
      if (Date.now() > end)
        throw new Error(`baresip: no ${type} event; saw ${this.events.map((e) => e.type)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private onCtrl(data: string): void {
    this.buffer += data;
    for (;;) {
      const colon = this.buffer.indexOf(':');
      if (colon < 0) return;
      const len = Number(this.buffer.slice(0, colon));
      if (!Number.isFinite(len) || this.buffer.length < colon + 1 + len + 1) return;
      const body = this.buffer.slice(colon + 1, colon + 1 + len);
      this.buffer = this.buffer.slice(colon + 1 + len + 1);
      try {
        const msg = JSON.parse(body) as Record<string, unknown>;
        if (msg.response && typeof msg.token === 'string') this.pending.get(msg.token)?.(msg);
        else if (msg.event) this.events.push(msg as unknown as BaresipEvent);
      } catch {
        // not JSON: ignore
      }
    }
  }

  /** Quits baresip (it un-REGISTERs on the way out) and waits for the process; idempotent. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.pid) {
      await this.command('quit').catch(() => {});
      const quit = await Promise.race([
        this.exited.then(() => true),
        new Promise((r) => setTimeout(r, 3000, false)),
      ]);
      if (!quit && child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
      await this.exited;
    }
    this.ctrl?.destroy();
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}
