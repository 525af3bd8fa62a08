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
  console.log(`
Switchboard demo is running at ${base}
  Super Admin : ${admin.emailAddress} / ${env.ADMIN_PASSWORD}  (sid ${admin.sid})
  Demo account: ${demo.emailAddress} / ${DEMO.password}  (sid ${demo.sid}, AuthToken ${demo.authToken})
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
