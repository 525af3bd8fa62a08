/**
 * A ProvisioningAgent may not read message text (spec §Authentication 4): failed SMS webhooks and
 * refused SMS/email requests leave Notifications whose RequestVariables hold the Body; the agent sees it redacted
 * in lists and single reads, JSON and XML, while an Administrator sees it whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
let agent: { sid: string; creds: Credentials };

beforeAll(async () => {
  ts = await startTestServer({ label: 'redaction' });
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'agent@example.test', Password: 'password-123', Role: 'ProvisioningAgent' },
  });
  expect(r.status, r.text).toBe(201);
  agent = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
});
afterAll(async () => {
  await ts?.dispose();
});

describe('Notifications for a ProvisioningAgent', () => {
  it('redacts message bodies in RequestVariables; the Administrator still reads them', async () => {
    // What the SMS markup path records when the tenant's SMS URL fails (sms-markup.ts): the
    // variables sent to the webhook, message text included.
    const n0 = await ts.server.notifier.notify({
      accountSid: agent.sid,
      errorCode: 11200,
      messageText: 'HTTP retrieval failure',
      requestUrl: 'http://127.0.0.1:9/sms',
      requestMethod: 'POST',
      requestVariables: [
        ['MessageSid', 'SM0123456789abcdef0123456789abcdef'],
        ['From', '+14155550199'],
        ['To', '+15552000009'],
        ['Body', 'secret ORDER text'],
      ],
    });
    expect(n0).not.toBeNull();
    const list = `${API}/Accounts/${agent.sid}/Notifications`;
    const asAdmin = await ts.request('GET', `${list}.json`);
    expect(asAdmin.status).toBe(200);
    const n = asAdmin.json.notifications.find((x: { request_variables: string | null }) =>
      x.request_variables?.includes('Body='),
    );
    expect(n, asAdmin.text).toBeDefined();
    expect(decodeURIComponent(n.request_variables)).toContain('secret ORDER text');

    const asAgent = await ts.request('GET', `${list}.json`, { auth: agent.creds });
    expect(asAgent.status).toBe(200);
    expect(asAgent.text).not.toContain('ORDER');
    const mine = asAgent.json.notifications.find((x: { sid: string }) => x.sid === n.sid);
    expect(mine.request_variables).toContain('Body=%5Bredacted%5D');
    // Other variables stay readable.
    expect(mine.request_variables).toContain('From=');
    for (const path of [`${list}/${n.sid}.json`, `${list}/${n.sid}`, list]) {
      const r = await ts.request('GET', path, { auth: agent.creds });
      expect(r.status, path).toBe(200);
      expect(r.text, path).not.toContain('ORDER');
    }
  });
});
