/** Calls list and get over HTTP: filters, paging envelope arithmetic, XML and JSON. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSid, SidPrefix } from '../../src/ids.js';
import type { CallRecord } from '../../src/store/call-store.js';
import { API, startTestServer, type TestServer } from '../support/server.js';
import { XMLParser } from '../support/xml.js';

let ts: TestServer;
const sids: string[] = [];

function call(i: number, over: Partial<CallRecord> = {}): CallRecord {
  const created = new Date(Date.UTC(2026, 0, 10 + i, 12, 0, 0));
  return {
    sid: newSid(SidPrefix.Call),
    parentCallSid: null,
    accountSid: ts.admin.sid,
    to: i % 2 ? '+15550000001' : '+15550000002',
    from: '+15559999999',
    phoneNumberSid: null,
    status: i % 3 === 0 ? 'busy' : 'completed',
    startTime: created,
    endTime: new Date(created.getTime() + 30_000),
    duration: 30,
    price: null,
    priceUnit: 'USD',
    direction: 'outbound-api',
    answeredBy: null,
    apiVersion: '2012-04-24',
    forwardedFrom: null,
    callerName: null,
    sipCallId: null,
    sipResponseCode: null,
    dateCreated: created,
    dateUpdated: created,
    ...over,
  };
}

beforeAll(async () => {
  ts = await startTestServer({ label: 'callsrest' });
  for (let i = 0; i < 7; i++) {
    const c = call(i);
    sids.push(c.sid);
    await ts.server.stores.calls.insert(c);
  }
});
afterAll(async () => {
  await ts?.dispose();
});

const base = () => `${API}/Accounts/${ts.admin.sid}/Calls`;

describe('Calls list', () => {
  it('pages with a working envelope (most recent first)', async () => {
    const first = await ts.request('GET', `${base()}.json?PageSize=3`);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ page: 0, num_pages: 2, page_size: 3, total: 7, start: 0, end: 2 });
    expect(first.json.calls.map((c: { sid: string }) => c.sid)).toEqual([sids[6], sids[5], sids[4]]);
    expect(first.json.previous_page_uri).toBe('null');
    expect(first.json.next_page_uri).toContain(`AfterSid=${sids[4]}`);
    const second = await ts.request('GET', first.json.next_page_uri);
    expect(second.json).toMatchObject({ page: 1, start: 3, end: 5 });
    const last = await ts.request('GET', second.json.last_page_uri);
    expect(last.json).toMatchObject({ page: 2, start: 6, end: 6, next_page_uri: 'null' });
    expect(last.json.calls).toHaveLength(1);
    const back = await ts.request('GET', last.json.previous_page_uri);
    expect(back.json.calls.map((c: { sid: string }) => c.sid)).toEqual(
      second.json.calls.map((c: { sid: string }) => c.sid),
    );
    const firstAgain = await ts.request('GET', last.json.first_page_uri);
    expect(firstAgain.json.calls).toEqual(first.json.calls);
  });

  it('filters by To, From, Status and StartTime, keeping filters in page URIs', async () => {
    const to = await ts.request('GET', `${base()}.json?To=%2B15550000001&PageSize=2`);
    expect(to.json.total).toBe(3);
    expect(to.json.next_page_uri).toContain('To=%2B15550000001');
    expect((await ts.request('GET', `${base()}.json?From=%2B15559999999`)).json.total).toBe(7);
    expect((await ts.request('GET', `${base()}.json?Status=busy`)).json.total).toBe(3);
    const day = await ts.request('GET', `${base()}.json?StartTime=2026-01-12`);
    expect(day.json.calls.map((c: { sid: string }) => c.sid)).toEqual([sids[2]]);
    const since = await ts.request('GET', `${base()}.json?StartTime=2026-01-15T00:00:00`);
    expect(since.json.total).toBe(2);
  });

  it('refuses a bad Status, a bad StartTime and a bad PageSize', async () => {
    expect((await ts.request('GET', `${base()}.json?Status=talking`)).status).toBe(400);
    expect((await ts.request('GET', `${base()}.json?StartTime=yesterday`)).status).toBe(400);
    expect((await ts.request('GET', `${base()}.json?PageSize=abc`)).status).toBe(400);
    const clamped = await ts.request('GET', `${base()}.json?PageSize=100000`);
    expect(clamped.json.page_size).toBe(1000);
  });

  it('renders the list in XML with the envelope as attributes', async () => {
    const res = await ts.request('GET', `${base()}?PageSize=2`);
    const doc = new XMLParser().parse(res.text);
    expect(doc.ServiceResponse.Calls['@total']).toBe(7);
    expect(doc.ServiceResponse.Calls['@numpages']).toBe(3);
    expect(doc.ServiceResponse.Calls.Call).toHaveLength(2);
  });

  it('gets one call in both forms, and 404 for an unknown sid', async () => {
    const j = await ts.request('GET', `${base()}/${sids[0]}.json`);
    expect(j.json).toMatchObject({ sid: sids[0], status: 'busy', direction: 'outbound-api', duration: 30 });
    expect(j.json.subresource_uris.recordings).toBe(`${base()}/${sids[0]}/Recordings.json`);
    const j2 = await ts.request('GET', `${API}/Accounts/${ts.admin.sid}/Calls.json/${sids[0]}`);
    expect(j2.json).toEqual(j.json);
    const x = new XMLParser().parse((await ts.request('GET', `${base()}/${sids[0]}`)).text);
    expect(x.ServiceResponse.Call.Sid).toBe(sids[0]);
    expect((await ts.request('GET', `${base()}/CA00000000000000000000000000000000.json`)).status).toBe(404);
  });
});
