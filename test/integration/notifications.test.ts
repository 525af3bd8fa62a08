/** Notifications over HTTP: list filters, SortBy both ways, Limit, paging envelope, per-call list, API misuse. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../support/server.js';
import { until } from '../support/until.js';
import { XMLParser } from '../support/xml.js';

let ts: TestServer;
let owner: { sid: string; creds: Credentials };
const base = () => `${API}/Accounts/${owner.sid}/Notifications`;
const as = (opts: Parameters<TestServer['request']>[2] = {}) => ({ auth: owner.creds, ...opts });

beforeAll(async () => {
  ts = await startTestServer({ label: 'notifications' });
  const res = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'notif@example.test', Password: 'password-123' },
  });
  owner = { sid: res.json.sid, creds: { user: res.json.sid, secret: res.json.auth_token } };
  const codes = [11200, 11205, 11200, 12003, 11005, 11200, 13227];
  for (let i = 0; i < codes.length; i++) {
    await ts.server.notifier.notify({
      accountSid: owner.sid,
      callSid: i < 3 ? 'CA0000000000000000000000000000000a' : null,
      errorCode: codes[i]!,
      log: i % 2 === 0 ? 0 : 1,
      messageText: `event ${i} ${i === 4 ? 'destination not found' : 'http failure'}`,
      requestUrl: i === 1 ? 'http://127.0.0.1:9/app.xml' : 'http://127.0.0.1:9/other.xml',
      requestMethod: 'POST',
      requestVariables: [
        ['CallSid', 'CA1'],
        ['Password', 'must-not-leak'],
      ],
      responseHeaders: { 'content-type': 'text/html' },
      responseBody: '<html>oops</html>',
    });
    await new Promise((r) => setTimeout(r, 5));
  }
});
afterAll(async () => {
  await ts?.dispose();
});

describe('Notifications', () => {
  it('lists with the envelope, limit 10000 by default, and pages that work when followed', async () => {
    const p0 = await ts.request('GET', `${base()}.json?PageSize=3`, as());
    expect(p0.json).toMatchObject({
      page: 0,
      page_size: 3,
      total: 7,
      num_pages: 2,
      start: 0,
      end: 2,
      limit: 10000,
    });
    expect(p0.json.notifications).toHaveLength(3);
    const p1 = await ts.request('GET', p0.json.next_page_uri, as());
    const p2 = await ts.request('GET', p1.json.next_page_uri, as());
    expect(p2.json.notifications).toHaveLength(1);
    expect(p2.json.next_page_uri).toBe('null');
    const all = [...p0.json.notifications, ...p1.json.notifications, ...p2.json.notifications].map(
      (n: { sid: string }) => n.sid,
    );
    expect(new Set(all).size).toBe(7);
  });

  it('filters by ErrorCode, RequestUrl, MessageText (contains) and dates; Limit caps the total', async () => {
    expect((await ts.request('GET', `${base()}.json?ErrorCode=11200`, as())).json.total).toBe(3);
    expect(
      (
        await ts.request(
          'GET',
          `${base()}.json?RequestUrl=${encodeURIComponent('http://127.0.0.1:9/app.xml')}`,
          as(),
        )
      ).json.total,
    ).toBe(1);
    const text = await ts.request('GET', `${base()}.json?MessageText=NOT%20FOUND`, as());
    expect(text.json.notifications.map((n: { error_code: number }) => n.error_code)).toEqual([11005]);
    const today = new Date().toISOString().slice(0, 10);
    expect(
      (await ts.request('GET', `${base()}.json?StartTime=${today}&EndTime=${today}`, as())).json.total,
    ).toBe(7);
    expect((await ts.request('GET', `${base()}.json?EndTime=2000-01-01`, as())).json.total).toBe(0);
    const limited = await ts.request('GET', `${base()}.json?Limit=4&PageSize=3`, as());
    expect(limited.json).toMatchObject({ total: 4, limit: 4, num_pages: 1 });
    const second = await ts.request('GET', limited.json.next_page_uri, as());
    expect(second.json.notifications).toHaveLength(1);
  });

  it('sorts by every attribute in both directions', async () => {
    for (const [attr, key] of [
      ['DateCreated', 'date_created'],
      ['Log', 'log'],
      ['ErrorCode', 'error_code'],
      ['CallSid', 'call_sid'],
      ['MessageText', 'message_text'],
    ] as const) {
      const asc = (await ts.request('GET', `${base()}.json?SortBy=${attr}:asc`, as())).json.notifications;
      const desc = (await ts.request('GET', `${base()}.json?SortBy=${attr}:desc`, as())).json.notifications;
      expect(desc.map((n: { sid: string }) => n.sid)).toEqual(
        [...asc].reverse().map((n: { sid: string }) => n.sid),
      );
      const values = asc.map((n: Record<string, unknown>) => n[key]).filter((v: unknown) => v !== null);
      const sorted = [...values].sort((a, b) =>
        key === 'date_created' ? Date.parse(String(a)) - Date.parse(String(b)) : a < b ? -1 : a > b ? 1 : 0,
      );
      expect(values, attr).toEqual(sorted);
    }
    expect((await ts.request('GET', `${base()}.json?SortBy=Price:asc`, as())).status).toBe(400);
    expect((await ts.request('GET', `${base()}.json?SortBy=ErrorCode:up`, as())).status).toBe(400);
  });

  it('lists a call notifications, gets one in both forms, masks secret variables', async () => {
    const byCall = await ts.request(
      'GET',
      `${API}/Accounts/${owner.sid}/Calls/CA0000000000000000000000000000000a/Notifications.json`,
      as(),
    );
    expect(byCall.json.total).toBe(3);
    const one = byCall.json.notifications[0];
    const got = await ts.request('GET', `${base()}/${one.sid}.json`, as());
    expect(got.json).toMatchObject({
      sid: one.sid,
      log: expect.any(Number),
      more_info: `${ts.url}/docs/errors#${one.error_code}`,
    });
    expect(got.json.request_variables).toContain('CallSid=CA1');
    expect(got.json.request_variables).not.toContain('must-not-leak');
    const x = new XMLParser().parse((await ts.request('GET', `${base()}/${one.sid}`, as())).text);
    expect(x.ServiceResponse.Notification.Sid).toBe(one.sid);
  });

  it('records refused API writes as warning notifications', async () => {
    await ts.request(
      'POST',
      `${API}/Accounts/${owner.sid}/Applications.json`,
      as({ form: { FriendlyName: 'x', Kind: 'telepathy' } }),
    );
    // The notification is written after the 400 has been answered.
    const list = await until(
      () => ts.request('GET', `${base()}.json?ErrorCode=21100&SortBy=DateCreated:desc`, as()),
      (r) => r.json.total >= 1,
      5000,
    );
    expect(list.json.total).toBeGreaterThanOrEqual(1);
    expect(list.json.notifications[0]).toMatchObject({ log: 1, request_method: 'POST' });
    expect(list.json.notifications[0].request_url).toContain('/Applications.json');
    expect(list.json.notifications[0].request_variables).toContain('Kind=telepathy');
  });
});
