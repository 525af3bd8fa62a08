/**
 * SMS after a crash: the server runs as its own process and is SIGKILLed mid-batch against the test
 * SMSC. After a restart (a new node id, so the dead node's leases must end first) every message is
 * sent, none stays `sending` longer than one lease period after the restart, and a message is
 * submitted twice only when its first submit_sm was never acknowledged (and then it is flagged
 * possible_duplicate).
 */
import { afterEach, expect, it } from 'vitest';
import { openDb } from '../../../src/store/postgres/db.js';
import { PgSmsStore } from '../../../src/store/postgres/sms-repository.js';
import { SmsStatus } from '../../../src/store/sms-store.js';
import { createNamespace, type TestNamespace } from '../../support/namespace.js';
import { API, type Credentials, httpRequest } from '../../support/server.js';
import { type ServerProcess, startServerProcess } from '../../support/server-process.js';
import { TestSmsc } from '../../support/smsc.js';
import { PASSWORD, SYSTEM_ID, smppUrl, waitFor } from './support.js';

const LEASE_MS = 3000;
const N = 30;
const ACKED = 8;
const WINDOW = 5;
const ADMIN = { email: 'crash-admin@example.test', password: 'crash-password-1' };

let ns: TestNamespace | undefined;
let smsc: TestSmsc | undefined;
const procs: ServerProcess[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      const exited = new Promise((r) => p.child.once('exit', r));
      p.child.kill('SIGTERM');
      await exited;
    }
  }
  await smsc?.close();
  await ns?.dispose();
  smsc = undefined;
  ns = undefined;
});

async function start(namespace: TestNamespace, port: number): Promise<ServerProcess> {
  const p = await startServerProcess(namespace, {
    entry: 'src',
    admin: ADMIN,
    sipPort: null,
    env: {
      SMPP_URL: smppUrl(port, `&window=${WINDOW}`),
      NUMBER_POOL: '+14155550100-+14155550199',
      SMS_LEASE_MS: String(LEASE_MS),
    },
  });
  procs.push(p);
  return p;
}

it('SIGKILL mid-batch: after a restart each message is sent, once unless never acknowledged, within one lease', async () => {
  ns = await createNamespace('smscrash');
  smsc = new TestSmsc();
  const world = smsc;
  world.behaviour.accounts = { [SYSTEM_ID]: PASSWORD };
  const port = await world.listen();
  const first = await start(ns, port);
  const admin: Credentials = { user: ADMIN.email, secret: ADMIN.password };
  const acct = await httpRequest(first.base, 'POST', `${API}/Accounts.json`, {
    auth: admin,
    form: { EmailAddress: 'crash-owner@example.test', Password: 'password-123', Role: 'Administrator' },
  });
  expect(acct.status, acct.text).toBe(201);
  const owner: Credentials = { user: acct.json.sid, secret: acct.json.auth_token };
  const num = await httpRequest(
    first.base,
    'POST',
    `${API}/Accounts/${owner.user}/IncomingPhoneNumbers.json`,
    {
      auth: owner,
      form: { PhoneNumber: '+14155550100' },
    },
  );
  expect(num.status, num.text).toBe(201);
  await waitFor(() => world.binds >= 1, 10_000, 'bound');

  // The first ACKED submits are answered; after that the SMSC stalls (window fills, the rest queue).
  const dest = (i: number) => `1555401${String(i).padStart(4, '0')}`;
  const sids: string[] = [];
  for (let i = 0; i < N; i++) {
    if (i === ACKED) {
      await waitFor(() => world.acknowledged.length === ACKED, 10_000, 'first messages acknowledged');
      world.behaviour.holdSubmitResps = true;
    }
    const r = await httpRequest(first.base, 'POST', `${API}/Accounts/${owner.user}/SMS/Messages.json`, {
      auth: owner,
      form: { From: '+14155550100', To: `+${dest(i)}`, Body: `crash ${i}` },
    });
    expect(r.status, r.text).toBe(201);
    sids.push(r.json.sid);
  }
  const db = openDb(ns.databaseUrl, 2);
  try {
    const store = new PgSmsStore(db);
    const statuses = async () => Promise.all(sids.map(async (s) => (await store.getAnyAccount(s))?.status));
    // Kill once the window is full of unanswered submits and the acknowledged ones are recorded.
    await waitFor(() => world.submits().length >= ACKED + WINDOW, 10_000, 'window full');
    await waitFor(
      async () => (await statuses()).filter((s) => s === SmsStatus.Sent).length === ACKED,
      10_000,
      'acknowledged messages recorded',
    );
    const submittedBeforeCrash = world.submits().map((p) => String(p.destination_addr));
    const ackedBeforeCrash = new Set(world.acknowledged);
    const exited = new Promise((r) => first.child.once('exit', r));
    first.child.kill('SIGKILL');
    await exited;
    world.behaviour.holdSubmitResps = false;

    const second = await start(ns, port);
    const restartedAt = Date.now();
    await waitFor(
      async () => (await statuses()).every((s) => s === SmsStatus.Sent),
      LEASE_MS + 20_000,
      'every message sent after the restart',
    );
    // None stayed `sending` longer than one lease after the restart (plus a submit round trip).
    expect(Date.now() - restartedAt).toBeLessThan(LEASE_MS + 2000);
    expect(second.child.exitCode).toBeNull();

    const perDest = new Map<string, number>();
    for (const p of world.submits()) {
      const d = String(p.destination_addr);
      perDest.set(d, (perDest.get(d) ?? 0) + 1);
    }
    const neverAcked = new Set(submittedBeforeCrash.filter((d) => !ackedBeforeCrash.has(d)));
    expect(neverAcked.size).toBe(WINDOW);
    for (let i = 0; i < N; i++) {
      const d = dest(i);
      const m = await store.getAnyAccount(sids[i]!);
      // Acknowledged before the crash: never submitted again.
      if (ackedBeforeCrash.has(d)) expect(perDest.get(d), d).toBe(1);
      // In the window, unanswered: submitted again once, and flagged.
      else if (neverAcked.has(d)) {
        expect(perDest.get(d), d).toBe(2);
        expect(m?.possibleDuplicate, d).toBe(true);
      }
      // Still queued in the dead process: submitted once, after the restart, and not flagged.
      else {
        expect(perDest.get(d), d).toBe(1);
        expect(m?.possibleDuplicate, d).toBe(false);
      }
    }
  } finally {
    await db.dispose();
  }
}, 90_000);
