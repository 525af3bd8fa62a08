/**
 * The store refuses text Postgres cannot hold (NUL, unpaired surrogates) with a typed error before
 * the statement is sent: nothing is written, the pool keeps working, and the API answers 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSid, SidPrefix } from '../../../src/ids.js';
import type { Application } from '../../../src/store/application-store.js';
import { StoreInputError } from '../../../src/store/store-errors.js';
import { receivedSms } from '../../support/records.js';
import { API, startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer({ label: 'storetext' });
});
afterAll(async () => {
  await ts?.dispose();
});

function application(friendlyName: string): Application {
  const now = new Date();
  return {
    sid: newSid(SidPrefix.Application),
    accountSid: ts.admin.sid,
    friendlyName,
    apiVersion: '2012-04-24',
    voiceCallerIdLookup: false,
    rcmlUrl: null,
    kind: 'voice',
    dateCreated: now,
    dateUpdated: now,
  };
}

describe('store text input', () => {
  it('an insert with NUL in a text column rejects with StoreInputError naming the column; nothing is written', async () => {
    const apps = ts.server.stores.applications;
    const a = application('bad\u0000name');
    const err = await apps.insert(a).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreInputError);
    expect((err as StoreInputError).column).toBe('friendly_name');
    expect((err as StoreInputError).reason).toBe('nul');
    expect(await apps.get(ts.admin.sid, a.sid)).toBeNull();
    // The pool still serves the next statement.
    const ok = application('fine');
    await apps.insert(ok);
    expect((await apps.get(ts.admin.sid, ok.sid))?.friendlyName).toBe('fine');
  });

  it('an update with an unpaired surrogate rejects with StoreInputError; the row is unchanged', async () => {
    const apps = ts.server.stores.applications;
    const a = application('before');
    await apps.insert(a);
    const err = await apps.update(ts.admin.sid, a.sid, { friendlyName: 'x\uD800y' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreInputError);
    expect((err as StoreInputError).column).toBe('friendly_name');
    expect((err as StoreInputError).reason).toBe('lone-surrogate');
    expect((await apps.get(ts.admin.sid, a.sid))?.friendlyName).toBe('before');
    // A well-formed pair (an emoji) is stored as it is.
    await apps.update(ts.admin.sid, a.sid, { friendlyName: 'ok \uD83D\uDE00' });
    expect((await apps.get(ts.admin.sid, a.sid))?.friendlyName).toBe('ok \uD83D\uDE00');
  });

  it('array and batched parameters are checked too (SMS group commit, provider ids)', async () => {
    const sms = ts.server.smsStore;
    const m = receivedSms(ts.admin.sid, {
      from: '+14155550100',
      to: '+14155550101',
      body: 'nul \u0000 inside',
    });
    const err = await sms.insert(m).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreInputError);
    expect((err as StoreInputError).column).toBe('body');
    expect(await sms.getAnyAccount(m.sid)).toBeNull();
    await sms.insert({ ...m, body: 'clean', status: 'sending', direction: 'outbound-api' });
    const bad = await sms
      .transition({ sid: m.sid, from: ['sending'], to: 'sent', providerIds: ['id\u0000'] })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(StoreInputError);
    expect((await sms.getAnyAccount(m.sid))?.status).toBe('sending');
  });

  it('through the API: an Application FriendlyName with NUL is 400 InvalidParameter, not 500', async () => {
    const r = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/Applications.json`, {
      auth: ts.admin,
      form: { FriendlyName: 'evil\u0000app' },
    });
    expect(r.status, r.text).toBe(400);
    expect(r.json.code).toBe(21100);
    expect(r.json.status).toBe(400);
    expect(typeof r.json.message).toBe('string');
  });
});
