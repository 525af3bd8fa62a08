/**
 * A local SMSC simulator for demos, on the scriptable SMSC of ops/lib/smsc.ts.
 *
 *   npx tsx ops/smsc-simulator.ts
 *
 * Env: SMSC_PORT (default 0 = ephemeral, printed), SMSC_SYSTEM_ID / SMSC_PASSWORD (default
 * switchboard / secret), SMSC_RECEIPT_MS (receipt delay, default 1000), SMSC_THROTTLE (fraction of
 * submits answered ESME_RTHROTTLED, default 0), SMSC_MO_EVERY_MS (send an MO "ping" every N ms to
 * bound ESMEs, default off). Prints the SMPP_URL to use and one line per received PDU. Ctrl-C stops.
 */
import { TestSmsc } from './lib/smsc.js';

const env = process.env;
const systemId = env.SMSC_SYSTEM_ID ?? 'switchboard';
const password = env.SMSC_PASSWORD ?? 'secret';
const smsc = new TestSmsc();
smsc.behaviour.accounts = { [systemId]: password };
smsc.behaviour.receiptDelayMs = Number(env.SMSC_RECEIPT_MS ?? 1000);
smsc.behaviour.throttleFraction = Number(env.SMSC_THROTTLE ?? 0);

const requested = Number(env.SMSC_PORT ?? 0);
const port = requested > 0 ? await smsc.listenOn(requested) : await smsc.listen();
process.stdout.write(
  `SMSC simulator listening; use SMPP_URL=smpp://${systemId}:${password}@127.0.0.1:${port}\n`,
);

let seen = 0;
const report = setInterval(() => {
  for (; seen < smsc.received.length; seen++) {
    const r = smsc.received[seen];
    if (!r) continue;
    const p = r.pdu;
    const detail =
      p.command === 'submit_sm' ? ` ${p.source_addr} -> ${p.destination_addr} dc=${p.data_coding}` : '';
    process.stdout.write(`${new Date(r.at).toISOString()} session=${r.session} ${r.command}${detail}\n`);
  }
}, 200);

const moEvery = Number(env.SMSC_MO_EVERY_MS ?? 0);
const mo =
  moEvery > 0
    ? setInterval(
        () =>
          smsc.deliverMo({
            from: '15557654321',
            to: '15550001111',
            dataCoding: 0,
            udh: false,
            shortMessage: Buffer.from('ping'),
          }),
        moEvery,
      )
    : null;

const stop = async (): Promise<void> => {
  clearInterval(report);
  if (mo) clearInterval(mo);
  await smsc.close();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
