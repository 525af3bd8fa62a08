/**
 * `npm run demo`: starts the server with demo data on a fresh machine. The Super Admin gets a known
 * password (unless ADMIN_PASSWORD is set) and a demo account is created once; credentials and a
 * "try it" block (src/cli/demo/try-it.ts) are printed. The demo number runs an IVR whose markup
 * this process serves itself (src/cli/demo/ivr.ts). Without DATABASE_URL / REDIS_URL and with
 * nothing answering on the default addresses, private Postgres/Redis instances are started under
 * `.data/` (src/cli/demo/local-services.ts).
 *
 * Env besides the server's: DEMO_SMSC=off (no SMSC simulator), DEMO_IVR_PORT (markup server port,
 * default any free port), DEMO_PG_PORT / DEMO_REDIS_PORT (private instances, 55432 / 56379).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { startServer } from '../server.js';
import { startDemoIvr } from './demo/ivr.js';
import { demoStorage, onPath } from './demo/local-services.js';
import { tryItBlock } from './demo/try-it.js';

const DEMO = {
  adminEmail: 'admin@switchboard.local',
  adminPassword: 'switchboard-admin',
  email: 'demo@switchboard.local',
  password: 'switchboard-demo',
  number: '+15550100001',
  client: { login: 'alice', password: 'alice-password' },
  database: 'switchboard_demo',
};

/**
 * Messaging demo: without SMPP_URL, start the bundled SMSC simulator (ops/smsc-simulator.ts,
 * receipts after 1 s) and connect to it. DEMO_SMSC=off skips it.
 */
async function startSmscSimulator(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'ops/smsc-simulator.ts'], {
    env: { ...process.env, SMSC_PORT: process.env.SMSC_PORT ?? '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`SMSC simulator exited (${code})`)));
    lines.on('line', (line) => {
      const m = /SMPP_URL=(\S+)/.exec(line);
      if (m?.[1]) resolve(m[1]);
    });
  });
  return { url, child };
}

const cleanups: (() => Promise<void>)[] = [];
const cleanup = async (): Promise<void> => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
};

async function main() {
  const env = { ...process.env };
  const storage = await demoStorage(env, {
    dataDir: join(process.cwd(), '.data'),
    database: DEMO.database,
    postgres: { host: '127.0.0.1', port: 5432, privatePort: Number(env.DEMO_PG_PORT ?? 55432) },
    redis: { host: '127.0.0.1', port: 6379, privatePort: Number(env.DEMO_REDIS_PORT ?? 56379) },
  });
  cleanups.push(storage.stop);
  env.DATABASE_URL = storage.databaseUrl;
  env.REDIS_URL = storage.redisUrl;
  const notes = [...storage.notes];
  if (!env.SMPP_URL && env.DEMO_SMSC !== 'off') {
    const sim = await startSmscSimulator();
    cleanups.push(async () => {
      if (sim.child.exitCode === null && sim.child.pid) process.kill(sim.child.pid, 'SIGTERM');
    });
    env.SMPP_URL = sim.url;
    notes.push(`SMSC: bundled simulator at ${sim.url} (delivery receipts after 1 s)`);
  }
  env.ADMIN_EMAIL ??= DEMO.adminEmail;
  env.ADMIN_PASSWORD ??= DEMO.adminPassword;
  env.REDIS_PREFIX ??= 'sbdemo';
  const config = loadConfig(env);
  const logger = createLogger(config.logLevel);

  // <Say> needs espeak-ng and sox; without them the greeting is the bundled WAV.
  const tts = onPath('espeak-ng') && onPath('sox');
  if (!tts)
    notes.push(
      'Speech: espeak-ng/sox not installed: the greeting is a bundled recording, other prompts are silent ' +
        '(apt-get install -y --no-install-recommends espeak-ng sox libsox-fmt-all)',
    );
  const ivr = await startDemoIvr({
    port: Number(env.DEMO_IVR_PORT ?? 0),
    tts,
    onEvent: (e) => {
      const what =
        e.kind === 'answered'
          ? 'answered'
          : e.kind === 'gathered'
            ? `pressed ${e.digits}`
            : `left a message: ${e.recordingUrl}.wav`;
      console.log(`demo IVR: call ${e.callSid} ${what}`);
    },
  });
  cleanups.push(ivr.close);

  const server = await startServer(config, { logger });
  cleanups.push(() => server.close());
  const admin = (await server.accounts.get(server.bootstrap.adminSid))!;
  let demo = await server.accounts.getByEmail(DEMO.email);
  if (!demo) {
    demo = await server.accounts.create(admin, {
      emailAddress: DEMO.email,
      password: DEMO.password,
      role: 'Administrator',
      friendlyName: 'Demo account',
    });
  }
  const base = config.http.publicUrlExplicit ? config.http.publicUrl : server.url;
  // Demo resources, through the API itself so they follow every rule a user's requests do.
  const auth = `Basic ${Buffer.from(`${demo.sid}:${demo.authToken}`).toString('base64')}`;
  const api = async (path: string, form: Record<string, string>) => {
    const r = await fetch(`${server.url}/2012-04-24/Accounts/${demo!.sid}/${path}.json`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    const body = (await r.json()) as Record<string, unknown>;
    if (!r.ok) throw new Error(`demo setup: POST ${path} answered ${r.status}: ${JSON.stringify(body)}`);
    return body;
  };
  const rcmlUrl = `${ivr.url}/hello.xml`;
  const existing = await server.stores.numbers.findByNumber(DEMO.number);
  if (!existing) {
    const app = await api('Applications', { FriendlyName: 'Demo IVR', RcmlUrl: rcmlUrl, Kind: 'voice' });
    await api('Clients', {
      Login: DEMO.client.login,
      Password: DEMO.client.password,
      FriendlyName: 'Alice (demo phone)',
    });
    await api('IncomingPhoneNumbers', { PhoneNumber: DEMO.number, VoiceApplicationSid: String(app.sid) });
  } else if (existing.voiceApplicationSid && existing.accountSid === demo.sid) {
    // The IVR's port may differ from the last run's: point the application at this run's server.
    await api(`Applications/${existing.voiceApplicationSid}`, { RcmlUrl: rcmlUrl });
  }
  // host:port as a SIP URI writes it (an IPv6 host in brackets), so the try-it block can read it back.
  const sipHost = config.sip.host.includes(':') ? `[${config.sip.host}]` : config.sip.host;
  const sip = server.sip ? `${sipHost}:${server.sip.stack.port}` : null;
  console.log(`
Switchboard demo is running at ${base}
  Super Admin : ${admin.emailAddress} / ${env.ADMIN_PASSWORD}  (sid ${admin.sid})
  Demo account: ${demo.emailAddress} / ${DEMO.password}  (sid ${demo.sid}, AuthToken ${demo.authToken})
  Demo resources: application "Demo IVR" (markup served by this process at ${rcmlUrl}),
                  client ${DEMO.client.login} / ${DEMO.client.password}, number ${DEMO.number}
  SIP: ${sip ?? 'disabled (SIP_ENABLED=false)'}
${notes.map((n) => `  ${n}`).join('\n')}
${tryItBlock({
  base,
  accountSid: demo.sid,
  authToken: demo.authToken,
  number: DEMO.number,
  sip: sip ?? '127.0.0.1:5080',
  client: DEMO.client,
  smsTo: '+15551234567',
})}
Stop with Ctrl-C.`);
  const stop = async () => {
    await cleanup();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch(async (e) => {
  console.error(`switchboard demo: ${(e as Error).message}`);
  await cleanup();
  process.exit(1);
});
