/**
 * Two nodes on one Postgres and Redis: the routing lookup of a hosted number is cached, and a change
 * made on one node (VoiceUrl, release) is seen by the other's next lookup, not after the cache ages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace, type TestNamespace } from '../../support/namespace.js';
import { API, startTestServer, type TestServer } from '../../support/server.js';
import { until } from '../../support/until.js';

let ns: TestNamespace;
let a: TestServer;
let b: TestServer;
beforeAll(async () => {
  ns = await createNamespace('numcache');
  a = await startTestServer({ ns, env: { SIP_ENABLED: 'false' } });
  b = await startTestServer({ ns, env: { SIP_ENABLED: 'false' } });
});
afterAll(async () => {
  await b?.server.close();
  await a?.dispose();
});

describe('number lookup cache', () => {
  it('a VoiceUrl change and a release on node A reach node B’s next lookup', async () => {
    const number = '+15550707001';
    const created = await a.request('POST', `${API}/Accounts/${a.admin.sid}/IncomingPhoneNumbers.json`, {
      form: { PhoneNumber: number, VoiceUrl: 'http://127.0.0.1:9/first' },
    });
    expect(created.status).toBe(201);
    const lookupB = () => b.server.stores.numbers.findByNumber(number);
    expect((await lookupB())?.voiceUrl).toBe('http://127.0.0.1:9/first');

    const updated = await a.request(
      'POST',
      `${API}/Accounts/${a.admin.sid}/IncomingPhoneNumbers/${created.json.sid}.json`,
      { form: { VoiceUrl: 'http://127.0.0.1:9/second' } },
    );
    expect(updated.status).toBe(200);
    // The cache keeps an entry for a minute: only the change notice can make this pass in time.
    expect((await until(lookupB, (n) => n?.voiceUrl === 'http://127.0.0.1:9/second', 3_000))?.voiceUrl).toBe(
      'http://127.0.0.1:9/second',
    );

    const released = await a.request(
      'DELETE',
      `${API}/Accounts/${a.admin.sid}/IncomingPhoneNumbers/${created.json.sid}.json`,
    );
    expect(released.status).toBe(204);
    expect(await until(lookupB, (n) => n === null, 3_000)).toBeNull();
  });
});
