/**
 * USSD push (`POST /Accounts/{sid}/UssdPush`) to a sipp USSD "gateway": the Url's message goes out
 * in the INVITE (unstructuredSSNotify_Request; unstructuredSSRequest_Request for a menu), the
 * gateway's INFO replies are answered, a menu reply reaches the action as Digits and its message
 * goes out in an INFO, and the session ends with a BYE carrying `<error-code value="1"/>`; a repeated
 * notify response afterwards finds no dialog. The REST answer is the Call (queued, outbound-api);
 * missing parameters are 400 in the error catalogue's shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { freePort } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startUssdSipp } from '../../support/ussd.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

let ts: TestServer;
let hooks: WebhookServer;
let owner: { sid: string; creds: Credentials };
let gatewayPort: number;

beforeAll(async () => {
  gatewayPort = await freePort('127.0.0.2');
  ts = await startTestServer({
    label: 'ussd-push',
    env: { USSD_GATEWAY_URI: `127.0.0.2:${gatewayPort}` },
  });
  hooks = await startWebhookServer();
  hooks.script('/status', { status: 204 });
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: 'ussd-push@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
});
afterAll(async () => {
  await hooks?.close();
  await ts?.dispose();
});

const formsTo = (path: string) =>
  hooks.requestsTo(path).map((r) => Object.fromEntries(new URLSearchParams(r.rawBody.toString())));

function push(form: Record<string, string>, suffix = '.json') {
  return ts.request('POST', `${API}/Accounts/${owner.sid}/UssdPush${suffix}`, { auth: owner.creds, form });
}

async function callOf(sid: string) {
  return (await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls/${sid}.json`, { auth: owner.creds }))
    .json;
}

describe('USSD push', () => {
  it('a notification: INVITE with the message, the INFO reply answered, BYE with error-code 1, no loop', async () => {
    hooks.script('/notify', xml('<UssdMessage>The information you requested is 1234567890</UssdMessage>'));
    const gateway = await startUssdSipp({
      scenario: 'uas-ussd-gateway-notify-expect-bye.xml',
      localPort: gatewayPort,
    });
    const r = await push({
      From: '*777#',
      To: '+15551230001',
      Url: `${hooks.origin}/notify`,
      StatusCallback: `${hooks.origin}/status`,
    });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      account_sid: owner.sid,
      from: '*777#',
      to: '+15551230001',
      status: 'queued',
      direction: 'outbound-api',
    });
    expect(r.json.sid).toMatch(/^CA[0-9a-f]{32}$/);
    const done = await gateway.done;
    expect(done.errors).toBe('');
    expect(done.code).toBe(0);
    expect(done.messages).toEqual([
      {
        request: 'INVITE',
        fields: ['unstructuredSSNotify_Request', 'The information you requested is 1234567890'],
      },
      { request: 'BYE', fields: ['1'] },
    ]);
    expect(formsTo('/notify')[0]).toMatchObject({
      CallSid: r.json.sid,
      From: '*777#',
      To: '+15551230001',
      Direction: 'outbound-api',
    });
    const call = await until(
      () => callOf(r.json.sid),
      (c) => c.status === 'completed',
    );
    expect(call).toMatchObject({ direction: 'outbound-api', status: 'completed' });
    const statuses = await until(
      () => formsTo('/status').filter((f) => f.CallSid === r.json.sid),
      (l) => l.length > 0,
    );
    expect(statuses).toHaveLength(1);
    expect(statuses[0]).toMatchObject({ CallStatus: 'completed', Direction: 'outbound-api' });
  });

  it('a menu: the reply reaches the action as Digits, its message goes out in an INFO, then BYE', async () => {
    hooks.script(
      '/menu',
      xml(
        '<UssdCollect action="/chosen"><UssdMessage>Please press</UssdMessage><UssdMessage>1 For option1</UssdMessage><UssdMessage>2 For option2</UssdMessage></UssdCollect>',
      ),
    );
    hooks.script('/chosen', xml('<UssdMessage>The information you requested is 1234567890</UssdMessage>'));
    const gateway = await startUssdSipp({
      scenario: 'uas-ussd-gateway-collect-expect-bye.xml',
      localPort: gatewayPort,
    });
    const r = await push({ From: '+15550009999', To: '+15551230002', Url: `${hooks.origin}/menu` });
    expect(r.status).toBe(201);
    const done = await gateway.done;
    expect(done.errors).toBe('');
    expect(done.messages).toEqual([
      {
        request: 'INVITE',
        fields: ['unstructuredSSRequest_Request', 'Please press\n1 For option1\n2 For option2'],
      },
      {
        request: 'INFO',
        fields: ['unstructuredSSNotify_Request', 'The information you requested is 1234567890'],
      },
      { request: 'BYE', fields: ['1'] },
    ]);
    expect(formsTo('/chosen')).toEqual([expect.objectContaining({ CallSid: r.json.sid, Digits: '1' })]);
    await until(
      () => callOf(r.json.sid),
      (c) => c.status === 'completed',
    );
  });

  it('From, To and Url are required (400, error catalogue shape, JSON and XML)', async () => {
    const noUrl = await push({ From: '*777#', To: '+15551230003' });
    expect(noUrl.status).toBe(400);
    expect(noUrl.json).toMatchObject({ code: 21101, status: 400 });
    expect(noUrl.json.message).toContain('Url');
    const noTo = await push({ From: '*777#', Url: `${hooks.origin}/notify` }, '');
    expect(noTo.status).toBe(400);
    expect(noTo.text).toContain('<Code>21101</Code>');
    const badTo = await push({ From: '*777#', To: 'bob smith', Url: `${hooks.origin}/notify` });
    expect(badTo.status).toBe(400);
    expect(badTo.json.code).toBe(21100);
  });
});
