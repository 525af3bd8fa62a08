/**
 * `npm run demo`: starts the server with demo data on a fresh machine. The Super Admin gets a known
 * password (unless ADMIN_PASSWORD is set) and a demo account is created once; credentials are printed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { startServer } from '../server.js';

const DEMO = {
  adminEmail: 'admin@switchboard.local',
  adminPassword: 'switchboard-admin',
  email: 'demo@switchboard.local',
  password: 'switchboard-demo',
  number: '+15550100001',
};

/**
 * Messaging demo (issue 7 item 7): without SMPP_URL, start the bundled SMSC simulator
 * (ops/smsc-simulator.ts, receipts after 1 s) and connect to it. DEMO_SMSC=off skips it.
 */
async function startSmscSimulator(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'ops/smsc-simulator.ts'], {
    env: { ...process.env, SMSC_PORT: process.env.SMSC_PORT ?? '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`SMSC simulator exited (${code})`)));
    lines.on('line', (line) => {
      const m = /SMPP_URL=(\S+)/.exec(line);
      if (m?.[1]) resolve(m[1]);
    });
  });
  return { url, child };
}

let smsc: ChildProcess | null = null;

async function main() {
  const env = { ...process.env };
  if (!env.SMPP_URL && env.DEMO_SMSC !== 'off') {
    const sim = await startSmscSimulator();
    smsc = sim.child;
    env.SMPP_URL = sim.url;
  }
  env.ADMIN_EMAIL ??= DEMO.adminEmail;
  env.ADMIN_PASSWORD ??= DEMO.adminPassword;
  env.DATABASE_URL ??= 'postgres://127.0.0.1:5432/switchboard_demo';
  env.REDIS_PREFIX ??= 'sbdemo';
  const config = loadConfig(env);
  const logger = createLogger(config.logLevel);
  const server = await startServer(config, { logger });
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
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  const existing = await server.stores.numbers.findByNumber(DEMO.number);
  if (!existing) {
    const app = await api('Applications', {
      FriendlyName: 'Demo IVR',
      RcmlUrl: `${base}/demo/hello.xml`,
      Kind: 'voice',
    });
    await api('Clients', { Login: 'alice', Password: 'alice-password', FriendlyName: 'Alice (demo phone)' });
    await api('IncomingPhoneNumbers', {
      PhoneNumber: DEMO.number,
      VoiceApplicationSid: String(app.body.sid),
    });
  }
  console.log(`
Switchboard demo is running at ${base}
  Super Admin : ${admin.emailAddress} / ${env.ADMIN_PASSWORD}  (sid ${admin.sid})
  Demo account: ${demo.emailAddress} / ${DEMO.password}  (sid ${demo.sid}, AuthToken ${demo.authToken})
  Demo resources: application "Demo IVR", client alice / alice-password, number ${DEMO.number}
  SMSC: ${smsc ? `bundled simulator at ${env.SMPP_URL} (receipts after 1 s)` : (env.SMPP_URL ?? 'none (DEMO_SMSC=off)')}
Try:
  curl -u '${demo.sid}:${demo.authToken}' ${base}/2012-04-24/Accounts/${demo.sid}.json
  curl -u '${demo.sid}:${demo.authToken}' ${base}/2012-04-24/Accounts/${demo.sid}/SMS/Messages.json \\
       --data-urlencode From=${DEMO.number} --data-urlencode To=+15551234567 --data-urlencode Body=Hello
  curl -u '${demo.sid}:${demo.authToken}' ${base}/2012-04-24/Accounts/${demo.sid}/SMS/Messages.json
Stop with Ctrl-C.`);
  const stop = async () => {
    await server.close();
    smsc?.kill('SIGTERM');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((e) => {
  smsc?.kill('SIGTERM');
  console.error(`switchboard demo: ${(e as Error).message}`);
  process.exit(1);
});
