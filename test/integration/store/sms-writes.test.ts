/**
 * SMS records are written in batches (group commit) when messages arrive together: every request of
 * a batch lands on its own row, one bad row fails only its own request, and submit attempts and
 * status transitions of many messages at once are all recorded.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newSid, SidPrefix } from '../../../src/ids.js';
import { type Db, openDb } from '../../../src/store/postgres/db.js';
import { PgSmsStore } from '../../../src/store/postgres/sms-repository.js';
import { SmsDirection, type SmsMessage, SmsStatus } from '../../../src/store/sms-store.js';
import { StoreInputError } from '../../../src/store/store-errors.js';
import { startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
let db: Db;
let store: PgSmsStore;
beforeAll(async () => {
  ts = await startTestServer({ label: 'smswrites' });
  db = openDb(ts.ns.databaseUrl, 4);
  store = new PgSmsStore(db);
});
afterAll(async () => {
  await db?.dispose();
  await ts?.dispose();
});

function message(body: string): SmsMessage {
  const now = new Date();
  return {
    sid: newSid(SidPrefix.Sms),
    accountSid: ts.admin.sid,
    from: '+14155550100',
    to: '+15551230000',
    body,
    status: SmsStatus.Sending,
    direction: SmsDirection.OutboundApi,
    channel: 'smpp',
    price: null,
    priceUnit: 'USD',
    apiVersion: '2012-04-24',
    errorCode: null,
    errorMessage: null,
    statusCallback: null,
    destinationNetworkId: null,
    segments: 0,
    possibleDuplicate: false,
    dateSent: null,
    dateCreated: now,
    dateUpdated: now,
  };
}

describe('SMS record writes in batches', () => {
  it('500 messages inserted at once are all recorded; the one bad row rejects alone', async () => {
    const good = Array.from({ length: 500 }, (_, i) => message(`batch ${i}`));
    const bad = message('bad\u0000body');
    const claim = { node: 'n1', until: new Date(Date.now() + 60_000) };
    const results = await Promise.allSettled([...good, bad].map((m) => store.insert(m, claim)));
    expect(results.slice(0, 500).every((r) => r.status === 'fulfilled')).toBe(true);
    const last = results[500];
    expect(last?.status === 'rejected' && last.reason).toBeInstanceOf(StoreInputError);
    const rows = await Promise.all(good.map((m) => store.get(ts.admin.sid, m.sid)));
    expect(rows.map((r) => r?.body)).toEqual(good.map((m) => m.body));
    expect(await store.get(ts.admin.sid, bad.sid)).toBeNull();
  });

  it('submit attempts, sent and delivered transitions of many messages at once all land on their rows', async () => {
    const many = Array.from({ length: 300 }, (_, i) => message(`flow ${i}`));
    await Promise.all(many.map((m) => store.insert(m)));
    await Promise.all(many.map((m) => store.markSubmitAttempted(m.sid)));
    const sent = await Promise.all(
      many.map((m, i) =>
        store.transition({
          sid: m.sid,
          from: [SmsStatus.Queued, SmsStatus.Sending],
          to: SmsStatus.Sent,
          providerIds: [`p-${i}`],
          dateSent: new Date(),
        }),
      ),
    );
    expect(sent.every((m) => m?.status === SmsStatus.Sent)).toBe(true);
    // A repeat of the same change finds the status moved on: nothing changes, null comes back.
    expect(
      await store.transition({ sid: many[0]!.sid, from: [SmsStatus.Sending], to: SmsStatus.Sent }),
    ).toBeNull();
    await Promise.all(
      many.map((m) => store.transition({ sid: m.sid, from: [SmsStatus.Sent], to: SmsStatus.Delivered })),
    );
    for (const [i, m] of many.entries()) {
      const row = await store.getAnyAccount(m.sid);
      expect(row).toMatchObject({ status: SmsStatus.Delivered, submitAttempted: true });
      expect((await store.findByProviderId(`p-${i}`))?.message.sid).toBe(m.sid);
    }
  });

  it('a transition the store refuses fails alone; the others of its batch are recorded', async () => {
    const many = Array.from({ length: 50 }, (_, i) => message(`iso ${i}`));
    await Promise.all(many.map((m) => store.insert(m)));
    const results = await Promise.allSettled(
      many.map((m, i) =>
        store.transition({
          sid: m.sid,
          from: [SmsStatus.Sending],
          to: SmsStatus.Sent,
          providerIds: [i === 7 ? 'bad\u0000id' : `iso-${i}`],
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect(results[7]?.status).toBe('rejected');
    const statuses = await Promise.all(many.map(async (m) => (await store.getAnyAccount(m.sid))?.status));
    expect(statuses.filter((s) => s === SmsStatus.Sent)).toHaveLength(49);
    expect(statuses[7]).toBe(SmsStatus.Sending);
  });

  it('inserts, submit attempts and transitions asked for together go in one transaction', async () => {
    const sent = Array.from({ length: 40 }, (_, i) => message(`mixed sent ${i}`));
    const attempted = Array.from({ length: 40 }, (_, i) => message(`mixed attempt ${i}`));
    await Promise.all([...sent, ...attempted].map((m) => store.insert(m)));
    const fresh = Array.from({ length: 40 }, (_, i) => message(`mixed new ${i}`));
    const statements = vi.spyOn(db, 'query');
    const [changed] = await Promise.all([
      Promise.all(
        sent.map((m, i) =>
          store.transition({
            sid: m.sid,
            from: [SmsStatus.Sending],
            to: SmsStatus.Sent,
            providerIds: [`mixed-${i}`],
          }),
        ),
      ),
      Promise.all(attempted.map((m) => store.markSubmitAttempted(m.sid))),
      Promise.all(fresh.map((m) => store.insert(m))),
    ]);
    // 120 writes in three statements: the first two leave alone (two batches may be in flight), the
    // other 118 queue behind them and go together.
    expect(statements).toHaveBeenCalledTimes(3);
    statements.mockRestore();
    expect(changed.every((m) => m?.status === SmsStatus.Sent)).toBe(true);
    for (const m of attempted) expect((await store.getAnyAccount(m.sid))?.submitAttempted).toBe(true);
    for (const m of fresh) expect((await store.getAnyAccount(m.sid))?.body).toBe(m.body);
    expect((await store.findByProviderId('mixed-7'))?.message.sid).toBe(sent[7]!.sid);
  });
});
