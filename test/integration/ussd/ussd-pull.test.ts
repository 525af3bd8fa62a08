/**
 * USSD pull from a sipp handset (INVITE with an application/vnd.3gpp.ussd+xml body): the number's
 * UssdUrl is fetched with the call parameters, its message comes back in the BYE; a UssdCollect menu
 * goes out in an INFO and the handset's reply reaches the action as Digits; a USSD code
 * (`*777*3#`) is a number; a message over 182 characters is replaced and Notification 11100
 * written; a suspended account's number gets 403 and Notification 11005; an unknown one 404. The
 * session is a Call (and type USSD in the supervisor's live calls).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { until, markup as xml } from '../../support/until.js';
import { runUssdSipp, startUssdSipp } from '../../support/ussd.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

let ts: TestServer;
let hooks: WebhookServer;
let owner: { sid: string; creds: Credentials };
let target: string;

async function newAccount(email: string) {
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: email, Password: 'password-123', Role: 'Developer' },
  });
  expect(r.status).toBe(201);
  return { sid: r.json.sid as string, creds: { user: r.json.sid, secret: r.json.auth_token } };
}

beforeAll(async () => {
  ts = await startTestServer({ label: 'ussd-pull' });
  hooks = await startWebhookServer();
  owner = await newAccount('ussd@example.test');
  target = `127.0.0.1:${ts.server.sip!.stack.port}`;
});
afterAll(async () => {
  await hooks?.close();
  await ts?.dispose();
});

/** Hosts `code` (a USSD code, short code or number) with its UssdUrl at `path`. */
async function ussdNumber(code: string, path: string, account = owner): Promise<string> {
  const r = await ts.request('POST', `${API}/Accounts/${account.sid}/IncomingPhoneNumbers.json`, {
    auth: account.creds,
    form: { PhoneNumber: code, UssdUrl: `${hooks.origin}${path}` },
  });
  expect(r.status).toBe(201);
  expect(r.json.phone_number).toBe(code);
  return r.json.sid;
}

const formsTo = (path: string) =>
  hooks.requestsTo(path).map((r) => Object.fromEntries(new URLSearchParams(r.rawBody.toString())));

async function callTo(to: string) {
  const r = await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls.json?To=${encodeURIComponent(to)}`, {
    auth: owner.creds,
  });
  return r.json.calls[0];
}

async function notifications(accountSid: string, code: number) {
  const r = await ts.request('GET', `${API}/Accounts/${accountSid}/Notifications.json?ErrorCode=${code}`, {
    auth: ts.admin,
  });
  return r.json.notifications as Array<{ message_text: string; error_code: number | string }>;
}

describe('USSD pull', () => {
  it('without a collect: the message comes back in the BYE; the session is a completed Call', async () => {
    hooks.script('/info', xml('<UssdMessage>The information you requested is 1234567890</UssdMessage>'));
    const numberSid = await ussdNumber('5544', '/info');
    const r = await runUssdSipp({ scenario: 'uac-ussd-expect-bye.xml', remote: target, service: '5544' });
    expect(r.errors).toBe('');
    expect(r.code).toBe(0);
    expect(r.messages).toEqual([
      {
        request: 'BYE',
        fields: ['processUnstructuredSSRequest_Response', 'The information you requested is 1234567890'],
      },
    ]);
    const [form] = formsTo('/info');
    expect(form).toMatchObject({
      AccountSid: owner.sid,
      From: '+15550001111',
      To: '5544',
      Direction: 'inbound',
      CallStatus: 'in-progress',
      ApiVersion: '2012-04-24',
    });
    const call = await until(
      () => callTo('5544'),
      (c) => c?.status === 'completed',
    );
    expect(call).toMatchObject({
      sid: form!.CallSid,
      direction: 'inbound',
      from: '+15550001111',
      phone_number_sid: numberSid,
    });
  });

  it('with a collect: the menu goes out in an INFO, the reply reaches the action as Digits, the answer in the BYE', async () => {
    hooks.script(
      '/menu',
      xml(
        '<UssdCollect action="/chosen"><UssdMessage>Please press</UssdMessage><UssdMessage>1 For option1</UssdMessage><UssdMessage>2 For option2</UssdMessage></UssdCollect>',
      ),
    );
    // The action answers slowly, so the live session can be looked at meanwhile.
    hooks.script('/chosen', xml('<UssdMessage>You chose option 1</UssdMessage>', 800));
    await ussdNumber('5555', '/menu');
    const sipp = await startUssdSipp({
      scenario: 'uac-ussd-collect-expect-bye.xml',
      remote: target,
      service: '5555',
    });
    const live = await until(
      async () => ts.server.supervisor.liveCalls().find((c) => c.to === '5555'),
      (c) => c !== undefined && hooks.requestsTo('/chosen').length > 0,
    );
    expect(live).toMatchObject({ type: 'USSD', direction: 'inbound', state: 'IN_PROGRESS' });
    const r = await sipp.done;
    expect(r.errors).toBe('');
    expect(r.messages).toEqual([
      {
        request: 'INFO',
        fields: ['unstructuredSSRequest_Request', 'Please press\n1 For option1\n2 For option2'],
      },
      { request: 'BYE', fields: ['processUnstructuredSSRequest_Response', 'You chose option 1'] },
    ]);
    const [chosen] = formsTo('/chosen');
    expect(chosen).toMatchObject({ Digits: '1', To: '5555', CallStatus: 'in-progress' });
    expect(chosen!.CallSid).toBe(formsTo('/menu')[0]!.CallSid);
  });

  it('a USSD code *777*3# is matched as the dialled number', async () => {
    hooks.script(
      '/bronze',
      xml('<UssdMessage>The information you requested for option 3 is bronze</UssdMessage>'),
    );
    await ussdNumber('*777*3#', '/bronze');
    await ussdNumber('*777#', '/never');
    const r = await runUssdSipp({
      scenario: 'uac-ussd-expect-bye.xml',
      remote: target,
      service: '*777*3%23',
    });
    expect(r.errors).toBe('');
    expect(r.messages[0]?.fields[1]).toBe('The information you requested for option 3 is bronze');
    expect(formsTo('/bronze')[0]).toMatchObject({ To: '*777*3#' });
    expect(hooks.requestsTo('/never')).toHaveLength(0);
  });

  it('a message over 182 characters is replaced by the error text and Notification 11100 is written', async () => {
    const long = `The information you requested is 1234567890 and ${'bla '.repeat(34)}`.trim();
    expect(long.length).toBeGreaterThan(182);
    hooks.script('/long', xml(`<UssdMessage>${long}</UssdMessage>`));
    await ussdNumber('5566', '/long');
    const r = await runUssdSipp({ scenario: 'uac-ussd-expect-bye.xml', remote: target, service: '5566' });
    expect(r.errors).toBe('');
    expect(r.messages[0]?.fields[1]).toBe(
      'Error while preparing the response.\nMessage length exceeds the maximum.',
    );
    const notes = await until(
      () => notifications(owner.sid, 11100),
      (l) => l.length > 0,
    );
    expect(notes[0]!.message_text).toContain('182');
  });

  it('a plain-text markup body is one message; a non-English Language allows 80 characters', async () => {
    hooks.script('/plain', {
      status: 200,
      headers: { 'Content-Type': 'text/plain' },
      body: 'Balance: 12.50 EUR',
    });
    await ussdNumber('5570', '/plain');
    const plain = await runUssdSipp({ scenario: 'uac-ussd-expect-bye.xml', remote: target, service: '5570' });
    expect(plain.messages[0]?.fields[1]).toBe('Balance: 12.50 EUR');
    hooks.script('/french', xml(`<Language>fr</Language><UssdMessage>${'é'.repeat(81)}</UssdMessage>`));
    await ussdNumber('5571', '/french');
    const fr = await runUssdSipp({ scenario: 'uac-ussd-expect-bye.xml', remote: target, service: '5571' });
    expect(fr.messages[0]?.fields[1]).toMatch(/^Error while preparing the response/);
  });

  it("a suspended account's number gets 403 and Notification 11005; an unknown number 404", async () => {
    const other = await newAccount('ussd-suspended@example.test');
    hooks.script('/suspended', xml('<UssdMessage>never sent</UssdMessage>'));
    await ussdNumber('5579', '/suspended', other);
    const s = await ts.request('POST', `${API}/Accounts/${other.sid}.json`, {
      auth: ts.admin,
      form: { Status: 'suspended' },
    });
    expect(s.status).toBe(200);
    const r = await runUssdSipp({ scenario: 'uac-ussd-expect-403.xml', remote: target, service: '5579' });
    expect(r.errors).toBe('');
    expect(hooks.requestsTo('/suspended')).toHaveLength(0);
    const notes = await until(
      () => notifications(other.sid, 11005),
      (l) => l.length > 0,
    );
    expect(notes).toHaveLength(1);
    const unknown = await runUssdSipp({
      scenario: 'uac-ussd-expect-404.xml',
      remote: target,
      service: '5999',
    });
    expect(unknown.errors).toBe('');
  });
});
