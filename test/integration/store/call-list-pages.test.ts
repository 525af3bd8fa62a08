/**
 * The calls list keeps rendered pages and sends them again while the account's list version
 * (migration 0022) is unchanged: whatever writes a call of the account — this node's store, another
 * program or node writing Postgres directly, a delete, a TRUNCATE — the next GET shows it; writes
 * that change nothing the list shows (claim renewals) and writes of another account keep the page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRecord } from '../../../src/actors/call/records.js';
import type { CallRecord } from '../../../src/store/call-store.js';
import { type Db, openDb, sql } from '../../../src/store/postgres/db.js';
import { API, startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
let db: Db;
let other: string;
beforeAll(async () => {
  ts = await startTestServer({ label: 'calllistpages', env: { SIP_ENABLED: 'false' } });
  db = openDb(ts.ns.databaseUrl, 2);
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'pages@example.test', Password: 'password-123', Role: 'Developer' },
  });
  expect(r.status, r.text).toBe(201);
  other = r.json.sid;
});
afterAll(async () => {
  await db?.dispose();
  await ts?.dispose();
});

function call(accountSid: string, from: string, status: CallRecord['status'] = 'completed'): CallRecord {
  return newRecord({
    accountSid,
    to: '+15550002222',
    from,
    direction: 'inbound',
    status,
    apiVersion: '2012-04-24',
  });
}

const list = (suffix = '.json?PageSize=5') =>
  ts.request('GET', `${API}/Accounts/${ts.admin.sid}/Calls${suffix}`);
const version = () => ts.server.stores.calls.listVersion(ts.admin.sid);

describe('kept calls list pages', () => {
  it('follow every write of the account, through the store or straight into Postgres', async () => {
    const calls = ts.server.stores.calls;
    const first = call(ts.admin.sid, '+15552000001', 'in-progress');
    await calls.insert(first);
    const a = await list();
    expect(a.json.total).toBe(1);
    // Served again, byte for byte, in JSON and in XML.
    expect((await list()).text).toBe(a.text);
    const xml = await list('?PageSize=5');
    expect((await list('?PageSize=5')).text).toBe(xml.text);

    await calls.insert(call(ts.admin.sid, '+15552000002'));
    const b = await list();
    expect(b.json.total).toBe(2);
    expect(b.json.calls.map((c: { from: string }) => c.from)).toContain('+15552000002');
    expect((await list('?PageSize=5')).text).toContain('+15552000002');

    await calls.patch(first.sid, { status: 'completed', duration: 7 });
    const c = await list();
    expect(c.json.calls.find((x: { sid: string }) => x.sid === first.sid)).toMatchObject({
      status: 'completed',
      duration: 7,
    });

    // Another writer (another node, an operator) changes a listed member without touching date_updated.
    await db.query(sql`UPDATE calls SET caller_name = 'Operator' WHERE sid = ${first.sid}`);
    const d = await list();
    expect(d.json.calls.find((x: { sid: string }) => x.sid === first.sid).caller_name).toBe('Operator');

    await db.query(sql`DELETE FROM calls WHERE sid = ${first.sid}`);
    const e = await list();
    expect(e.json.total).toBe(1);
    expect(e.json.calls.map((x: { sid: string }) => x.sid)).not.toContain(first.sid);
  });

  it('keep their version across writes the list does not show and writes of another account', async () => {
    const calls = ts.server.stores.calls;
    const live = call(ts.admin.sid, '+15552000003', 'ringing');
    await calls.insert(live, { claim: { node: 'node-a', leaseMs: 30_000 } });
    const before = await version();
    await calls.renewClaims('node-a', 60_000);
    await db.query(sql`UPDATE calls SET claimed_until = now() WHERE sid = ${live.sid}`);
    await calls.insert(call(other, '+15553000001'));
    expect(await version()).toBe(before);
    await calls.update(live.sid, { status: 'in-progress' });
    expect(await version()).toBeGreaterThan(before);
  });

  it('order calls made in the same millisecond by their exact time (dates are read in milliseconds)', async () => {
    // CAa… sorts before CAb… yet was created later: sid order alone would put it second.
    await db.query(sql`
      INSERT INTO calls (sid, account_sid, to_address, from_address, status, direction, date_created, date_updated)
      VALUES ('CAa0000000000000000000000000000001', ${other}, '+1', 'a', 'completed', 'inbound',
              '2030-01-01 00:00:00.000900+00', '2030-01-01 00:00:00.000900+00'),
             ('CAb0000000000000000000000000000002', ${other}, '+1', 'a', 'completed', 'inbound',
              '2030-01-01 00:00:00.000100+00', '2030-01-01 00:00:00.000100+00')`);
    const page = await ts.server.stores.calls.list({ accountSid: other }, { offset: 0, limit: 2 });
    expect(page.items.map((c) => c.sid)).toEqual([
      'CAa0000000000000000000000000000001',
      'CAb0000000000000000000000000000002',
    ]);
    expect(page.items[0]?.dateCreated.toISOString()).toBe('2030-01-01T00:00:00.000Z');
  });

  it('start over after a TRUNCATE (counts too)', async () => {
    await list();
    await db.query(sql`TRUNCATE calls`);
    const r = await list();
    expect(r.json).toMatchObject({ total: 0, calls: [] });
    await ts.server.stores.calls.insert(call(ts.admin.sid, '+15552000004'));
    expect((await list()).json.total).toBe(1);
  });
});
