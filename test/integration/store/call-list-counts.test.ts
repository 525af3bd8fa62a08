/**
 * The calls list's total comes from a per-account count kept by triggers (migration 0019), not
 * from counting rows: it must still equal the rows there are, whatever way calls were written
 * (batched inserts of several accounts, a batch that fell back to row-by-row writes, a repeated
 * sid that wrote nothing), and filtered lists still count what they match.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRecord } from '../../../src/actors/call/records.js';
import type { CallRecord } from '../../../src/store/call-store.js';
import { API, startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
let other: string;
beforeAll(async () => {
  ts = await startTestServer({ label: 'calllistcounts', env: { SIP_ENABLED: 'false' } });
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'counts@example.test', Password: 'password-123', Role: 'Developer' },
  });
  expect(r.status, r.text).toBe(201);
  other = r.json.sid;
});
afterAll(async () => {
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

describe('calls list totals', () => {
  it('equal the rows written: batched inserts of two accounts, a row-by-row fallback, a repeated sid', async () => {
    const calls = ts.server.stores.calls;
    const mine = Array.from({ length: 30 }, (_, i) =>
      call(ts.admin.sid, `+1555200${String(i).padStart(4, '0')}`),
    );
    const theirs = Array.from({ length: 7 }, (_, i) => call(other, `+1555300${String(i).padStart(4, '0')}`));
    // A NUL makes its batch fail and be written again row by row.
    const bad = call(ts.admin.sid, 'bad\u0000caller');
    await Promise.allSettled([...mine, ...theirs, bad].map((c) => calls.insert(c)));
    await calls.insert(mine[0] as CallRecord); // the same sid again: nothing written, nothing counted

    const page = await calls.list({ accountSid: ts.admin.sid }, { offset: 0, limit: 10 });
    expect(page.total).toBe(30);
    expect(page.items).toHaveLength(10);
    expect((await calls.list({ accountSid: other }, { offset: 0, limit: 50 })).total).toBe(7);
    // Past the last page: no items, the same total.
    expect(await calls.list({ accountSid: ts.admin.sid }, { offset: 100, limit: 10 })).toEqual({
      total: 30,
      items: [],
      version: expect.any(Number),
    });
  });

  it('filtered lists count what they match, in the REST envelope too', async () => {
    const calls = ts.server.stores.calls;
    await Promise.all(
      Array.from({ length: 3 }, (_, i) => calls.insert(call(other, `+1555400000${i}`, 'busy'))),
    );
    expect((await calls.list({ accountSid: other, status: 'busy' }, { offset: 0, limit: 2 })).total).toBe(3);
    const r = await ts.request('GET', `${API}/Accounts/${other}/Calls.json?Status=busy&PageSize=2`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ total: 3, num_pages: 1, page_size: 2 });
    const all = await ts.request('GET', `${API}/Accounts/${other}/Calls.json?PageSize=2`);
    expect(all.json).toMatchObject({ total: 10, num_pages: 4, end: 1 });
  });
});
