/**
 * REST calls to sipp UASs (REST call statuses and callbacks, no-answer,
 * busy, failed; live modification cancel/complete): `POST /Calls` answers queued, the call goes
 * queued → ringing → in-progress → completed, the progress callbacks asked for arrive signed with
 * increasing SequenceNumber (only completed by default), the record is closed once.
 */

import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { startSipp } from '../../support/sipp.js';
import { until } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

let ts: TestServer;
let hooks: WebhookServer;
let owner: { sid: string; token: string; creds: Credentials };

beforeAll(async () => {
  ts = await startTestServer({ label: 'outbound' });
  hooks = await startWebhookServer();
  hooks.script('/status', { status: 204 });
  // The callee or the test ends the calls; the markup only holds them up.
  hooks.script('/answer', {
    status: 200,
    headers: { 'Content-Type': 'text/xml' },
    body: '<Response><Pause length="20"/></Response>',
  });
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: 'caller@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = {
    sid: r.json.sid,
    token: r.json.auth_token,
    creds: { user: r.json.sid, secret: r.json.auth_token },
  };
});
afterAll(async () => {
  await hooks?.close();
  await ts?.dispose();
});

const calls = () => `${API}/Accounts/${owner.sid}/Calls`;

const getCall = async (sid: string) =>
  (await ts.request('GET', `${calls()}/${sid}.json`, { auth: owner.creds })).json;

function callbacksFor(sid: string, path = '/status') {
  return hooks
    .requestsTo(path)
    .map((r) => ({ r, form: new URLSearchParams(r.rawBody.toString()) }))
    .filter((x) => x.form.get('CallSid') === sid);
}

async function createCall(to: string, form: Record<string, string> = {}) {
  const r = await ts.request('POST', `${calls()}.json`, {
    auth: owner.creds,
    form: { From: '+15550001000', To: to, Url: `${hooks.origin}/answer`, ...form },
  });
  return r;
}

describe('POST /Calls', () => {
  it('queued → ringing → in-progress → completed with all four callbacks, signed and sequenced', async () => {
    const uas = await startSipp({ scenario: 'uas-answer-then-bye.xml', localIp: '127.0.0.3' });
    const created = await createCall(`sip:bob@127.0.0.3:${uas.localPort}`, {
      StatusCallback: `${hooks.origin}/status`,
      StatusCallbackEvent: 'initiated,ringing,answered,completed',
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ status: 'queued', direction: 'outbound-api', from: '+15550001000' });
    expect(created.headers.get('location')).toContain(`/Calls/${created.json.sid}`);
    const sid = created.json.sid as string;

    const done = await until(
      () => getCall(sid),
      (c) => c.status === 'completed',
    );
    expect(done).toMatchObject({ status: 'completed' });
    expect(done.start_time).not.toBeNull();
    expect(done.end_time).not.toBeNull();
    expect(done.duration).toBeGreaterThanOrEqual(0);
    const uasResult = await uas.done;
    expect(uasResult.errors).toBe('');

    const cbs = await until(
      () => callbacksFor(sid),
      (l) => l.length >= 4,
    );
    expect(cbs.map((c) => c.form.get('CallStatus'))).toEqual([
      'initiated',
      'ringing',
      'in-progress',
      'completed',
    ]);
    expect(cbs.map((c) => c.form.get('SequenceNumber'))).toEqual(['0', '1', '2', '3']);
    for (const { r, form } of cbs) {
      expect(form.get('CallbackSource')).toBe('call-progress-events');
      expect(form.get('Timestamp')).toMatch(/GMT|\+0000/);
      expect(form.get('AccountSid')).toBe(owner.sid);
      const params = Object.fromEntries(form.entries());
      const valid = twilio.validateRequest(
        owner.token,
        r.headers['x-twilio-signature'] as string,
        `${hooks.origin}${r.url}`,
        params,
      );
      expect(valid).toBe(true);
    }
    expect(cbs[3]!.form.get('CallDuration')).toMatch(/^\d+$/);
    // The Url ran once the callee answered.
    const [markup] = hooks
      .requestsTo('/answer')
      .map((r) => new URLSearchParams(r.rawBody.toString()))
      .filter((f) => f.get('CallSid') === sid);
    expect(markup?.get('CallStatus')).toBe('in-progress');
    expect(markup?.get('Direction')).toBe('outbound-api');
  });

  it('only the completed callback by default', async () => {
    const uas = await startSipp({ scenario: 'uas-answer-then-bye.xml', localIp: '127.0.0.3' });
    const created = await createCall(`sip:bob@127.0.0.3:${uas.localPort}`, {
      StatusCallback: `${hooks.origin}/status`,
    });
    const sid = created.json.sid as string;
    await until(
      () => getCall(sid),
      (c) => c.status === 'completed',
    );
    await uas.done;
    const cbs = await until(
      () => callbacksFor(sid),
      (l) => l.length >= 1,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(callbacksFor(sid).map((c) => [c.form.get('CallStatus'), c.form.get('SequenceNumber')])).toEqual([
      ['completed', '0'],
    ]);
    expect(cbs).toHaveLength(1);
  });

  it('busy (486) and failed (unreachable) end the call with that status', async () => {
    const uas = await startSipp({ scenario: 'uas-busy-expect-ack.xml', localIp: '127.0.0.3' });
    const busy = await createCall(`sip:bob@127.0.0.3:${uas.localPort}`);
    expect(
      await until(
        () => getCall(busy.json.sid),
        (c) => c.status === 'busy',
      ),
    ).toMatchObject({ status: 'busy', duration: 0 });
    expect((await uas.done).errors).toBe('');

    const failed = await createCall('sip:nobody@127.0.0.9:9;transport=tcp');
    expect(
      await until(
        () => getCall(failed.json.sid),
        (c) => c.status === 'failed',
      ),
    ).toMatchObject({ status: 'failed' });
  });

  it('Timeout → no-answer (the ringing INVITE is canceled)', async () => {
    const uas = await startSipp({ scenario: 'uas-ring-expect-cancel.xml', localIp: '127.0.0.3' });
    const created = await createCall(`sip:bob@127.0.0.3:${uas.localPort}`, { Timeout: '1' });
    expect(
      await until(
        () => getCall(created.json.sid),
        (c) => c.status === 'no-answer',
      ),
    ).toMatchObject({ status: 'no-answer' });
    expect((await uas.done).errors).toBe('');
  });

  it('bad input: missing To/Url, bad To, bad Timeout, unknown StatusCallbackEvent → 400', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ From: '+1555', Url: `${hooks.origin}/a` }, /To/],
      [{ From: '+1555', To: '+15550002222' }, /Url/],
      [{ From: '+1555', To: 'tel:+1555', Url: `${hooks.origin}/a` }, /To/],
      [{ From: '+1555', To: '+15550002222', Url: 'ftp://x' }, /Url/],
      [{ From: '+1555', To: '+15550002222', Url: `${hooks.origin}/a`, Timeout: '0' }, /Timeout/],
      [{ From: '+1555', To: '+15550002222', Url: `${hooks.origin}/a`, StatusCallbackEvent: 'hung' }, /hung/],
    ];
    for (const [form, message] of cases) {
      const r = await ts.request('POST', `${calls()}.json`, { auth: owner.creds, form });
      expect(r.status, JSON.stringify(form)).toBe(400);
      expect(r.json.message).toMatch(message);
    }
  });
});

describe('POST /Calls/{sid} (live modification)', () => {
  it('Status=canceled while ringing → canceled; the callee sees CANCEL', async () => {
    const uas = await startSipp({ scenario: 'uas-ring-expect-cancel.xml', localIp: '127.0.0.3' });
    const created = await createCall(`sip:bob@127.0.0.3:${uas.localPort}`);
    const sid = created.json.sid as string;
    await until(
      () => getCall(sid),
      (c) => c.status === 'ringing',
    );
    const r = await ts.request('POST', `${calls()}/${sid}.json`, {
      auth: owner.creds,
      form: { Status: 'canceled' },
    });
    expect(r.status).toBe(200);
    expect(
      await until(
        () => getCall(sid),
        (c) => c.status === 'canceled',
      ),
    ).toMatchObject({ status: 'canceled' });
    expect((await uas.done).errors).toBe('');
    // The call is over: modifying it again is a conflict.
    const again = await ts.request('POST', `${calls()}/${sid}.json`, {
      auth: owner.creds,
      form: { Status: 'completed' },
    });
    expect(again.status).toBe(409);
  });

  it('Status=canceled has no effect on an answered call; Status=completed hangs it up (BYE)', async () => {
    const uas = await startSipp({ scenario: 'uas-answer-expect-bye.xml', localIp: '127.0.0.3' });
    const created = await createCall(`sip:bob@127.0.0.3:${uas.localPort}`);
    const sid = created.json.sid as string;
    await until(
      () => getCall(sid),
      (c) => c.status === 'in-progress',
    );
    const cancel = await ts.request('POST', `${calls()}/${sid}.json`, {
      auth: owner.creds,
      form: { Status: 'canceled' },
    });
    expect(cancel.status).toBe(200);
    expect(cancel.json.status).toBe('in-progress');
    const complete = await ts.request('POST', `${calls()}/${sid}.json`, {
      auth: owner.creds,
      form: { Status: 'completed' },
    });
    expect(complete.status).toBe(200);
    expect(
      await until(
        () => getCall(sid),
        (c) => c.status === 'completed',
      ),
    ).toMatchObject({ status: 'completed' });
    expect((await uas.done).errors).toBe('');
  });

  it('an unknown call is 404, a missing or bad Status is 400', async () => {
    const missing = await ts.request('POST', `${calls()}/CA00000000000000000000000000000000.json`, {
      auth: owner.creds,
      form: { Status: 'completed' },
    });
    expect(missing.status).toBe(404);
    const list = await ts.request('GET', `${calls()}.json`, { auth: owner.creds });
    const sid = list.json.calls[0].sid as string;
    const bad = await ts.request('POST', `${calls()}/${sid}.json`, {
      auth: owner.creds,
      form: { Status: 'ringing' },
    });
    expect(bad.status).toBe(400);
  });
});
