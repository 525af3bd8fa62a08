/**
 * Call records are written in batches when calls arrive together: one bad row (text the store
 * refuses) fails only its own call, and concurrent progress patches of many calls all land.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRecord } from '../../../src/actors/call/records.js';
import type { CallRecord } from '../../../src/store/call-store.js';
import { StoreInputError } from '../../../src/store/store-errors.js';
import { startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer({ label: 'callwrites' });
});
afterAll(async () => {
  await ts?.dispose();
});

function call(from: string): CallRecord {
  return newRecord({
    accountSid: ts.admin.sid,
    to: '+15550001111',
    from,
    direction: 'inbound',
    status: 'ringing',
    apiVersion: '2012-04-24',
  });
}

describe('call record writes', () => {
  it('inserts made together: the bad one rejects with StoreInputError, the others are written', async () => {
    const calls = ts.server.stores.calls;
    const good = Array.from({ length: 20 }, (_, i) => call(`+1555000${String(i).padStart(4, '0')}`));
    const bad = call('bad\u0000caller');
    const results = await Promise.allSettled([...good, bad].map((c) => calls.insert(c)));
    expect(results.slice(0, 20).every((r) => r.status === 'fulfilled')).toBe(true);
    const last = results[20];
    expect(last?.status === 'rejected' && last.reason).toBeInstanceOf(StoreInputError);
    for (const c of good) expect((await calls.get(ts.admin.sid, c.sid))?.from).toBe(c.from);
    expect(await calls.get(ts.admin.sid, bad.sid)).toBeNull();
  });

  it('progress patches of many calls at once all land, each on its own row', async () => {
    const calls = ts.server.stores.calls;
    const many = Array.from({ length: 50 }, (_, i) => call(`+1555100${String(i).padStart(4, '0')}`));
    await Promise.all(many.map((c) => calls.insert(c)));
    const start = new Date('2026-01-01T00:00:00Z');
    await Promise.all(
      many.map((c, i) =>
        calls.patch(c.sid, { status: 'in-progress', startTime: start, sipResponseCode: 200 + (i % 2) }),
      ),
    );
    await Promise.all(
      many.map((c, i) => calls.patch(c.sid, { status: 'completed', duration: i, endTime: new Date() })),
    );
    for (const [i, c] of many.entries()) {
      expect(await calls.get(ts.admin.sid, c.sid)).toMatchObject({
        status: 'completed',
        startTime: start,
        duration: i,
        sipResponseCode: 200 + (i % 2),
      });
    }
  });
});
