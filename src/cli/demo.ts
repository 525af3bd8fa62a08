/**
 * `npm run demo`: starts the server with demo data on a fresh machine. The Super Admin gets a known
 * password (unless ADMIN_PASSWORD is set) and a demo account is created once; credentials are printed.
 */
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

async function main() {
  const env = { ...process.env };
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
Try:
  curl -u '${demo.sid}:${demo.authToken}' ${base}/2012-04-24/Accounts/${demo.sid}.json
Stop with Ctrl-C.`);
  const stop = async () => {
    await server.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((e) => {
  console.error(`switchboard demo: ${(e as Error).message}`);
  process.exit(1);
});
