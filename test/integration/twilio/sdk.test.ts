/**
 * The real `twilio` SDK (v5) against the server's 2010-04-01 surface, through a loopback
 * RequestClient: a REST call to a sipp UAS that completes, calls listed across two pages, a message
 * to the local SMSC, a number bought and given a VoiceUrl that an inbound sipp call then uses,
 * an application, a recording with its media, notifications, and the server's webhooks checked with
 * `twilio.validateRequest`.
 */
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API } from '../../support/server.js';
import { runSipp, startSipp } from '../../support/sipp.js';
import { localTwilio } from '../../support/twilio-sdk.js';
import { markup, until } from '../../support/until.js';
import { type SmsWorld, startSmsWorld, stopSmsWorld, waitFor } from '../sms/support.js';
import { smText, tone } from './support.js';

let w: SmsWorld;
let sdk: ReturnType<typeof localTwilio>;
let token: string;

beforeAll(async () => {
  w = await startSmsWorld({ label: 'twiliosdk' });
  token = w.owner.creds.secret;
  sdk = localTwilio(w.ts.url, w.owner.sid, token);
  w.hooks.script('/status', { status: 204 });
  w.hooks.script('/answer', markup('<Pause length="20"/>'));
});
afterAll(async () => {
  await stopSmsWorld(w);
});

/** Every request the server sent to `path`, checked the way a Twilio user's webhook would check it. */
function expectSigned(path: string, min: number) {
  const reqs = w.hooks.requestsTo(path);
  expect(reqs.length).toBeGreaterThanOrEqual(min);
  for (const r of reqs) {
    const params = Object.fromEntries(new URLSearchParams(r.rawBody.toString()));
    const signature = r.headers['x-twilio-signature'] as string;
    expect(twilio.validateRequest(token, signature, `${w.hooks.origin}${r.url}`, params)).toBe(true);
    // A tampered parameter fails the same check: the test is not vacuous.
    expect(
      twilio.validateRequest(token, signature, `${w.hooks.origin}${r.url}`, { ...params, To: 'x' }),
    ).toBe(false);
  }
  return reqs;
}

describe('twilio SDK against the 2010-04-01 surface', () => {
  const callSids: string[] = [];

  it('creates a call that completes, with signed webhooks', async () => {
    const uas = await startSipp({ scenario: 'uas-answer-then-bye.xml', localIp: '127.0.0.3' });
    const call = await sdk.client.calls.create({
      from: '+15550001000',
      to: `sip:bob@127.0.0.3:${uas.localPort}`,
      url: `${w.hooks.origin}/answer`,
      statusCallback: `${w.hooks.origin}/status`,
      statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
    });
    expect(call.sid).toMatch(/^CA[0-9a-f]{32}$/);
    expect(call.status).toBe('queued');
    expect(call.direction).toBe('outbound-api');
    expect(call.uri).toBe(`/2010-04-01/Accounts/${w.owner.sid}/Calls/${call.sid}.json`);
    callSids.push(call.sid);
    const done = await until(
      () => sdk.client.calls(call.sid).fetch(),
      (c) => c.status === 'completed',
      20_000,
    );
    expect(done.status).toBe('completed');
    expect(done.duration).toMatch(/^\d+$/);
    expect(done.startTime).toBeInstanceOf(Date);
    expect(done.endTime).toBeInstanceOf(Date);
    expect((await uas.done).errors).toBe('');
    const statuses = await until(
      () =>
        w.hooks
          .requestsTo('/status')
          .map((r) => new URLSearchParams(r.rawBody.toString()))
          .filter((f) => f.get('CallSid') === call.sid)
          .map((f) => f.get('CallStatus')),
      (l) => l.length >= 4,
    );
    // All four repeated StatusCallbackEvent members were honoured.
    expect(statuses).toEqual(['initiated', 'ringing', 'in-progress', 'completed']);
    expectSigned('/answer', 1);
    expectSigned('/status', 4);
  });

  it('lists calls across two pages (list with pageSize, then page/nextPage/previousPage)', async () => {
    // The second call is ended through the SDK (update status=completed) while the markup pauses.
    const uas = await startSipp({ scenario: 'uas-answer-expect-bye.xml', localIp: '127.0.0.3' });
    const second = await sdk.client.calls.create({
      from: '+15550001001',
      to: `sip:bob@127.0.0.3:${uas.localPort}`,
      url: `${w.hooks.origin}/answer`,
    });
    callSids.push(second.sid);
    await until(
      () => sdk.client.calls(second.sid).fetch(),
      (c) => c.status === 'in-progress',
      20_000,
    );
    const ended = await sdk.client.calls(second.sid).update({ status: 'completed' });
    expect(ended.sid).toBe(second.sid);
    expect(
      (
        await until(
          () => sdk.client.calls(second.sid).fetch(),
          (c) => c.status === 'completed',
        )
      ).status,
    ).toBe('completed');
    expect((await uas.done).errors).toBe('');

    const before = sdk.httpClient.sent.length;
    const listed = await sdk.client.calls.list({ pageSize: 1, limit: 2 });
    expect(listed.map((c) => c.sid).sort()).toEqual([...callSids].sort());
    const requests = sdk.httpClient.sent.slice(before).map((r) => r.url);
    expect(requests).toHaveLength(2);
    expect(requests[1]).toMatch(
      /\/2010-04-01\/Accounts\/AC[0-9a-f]{32}\/Calls\.json\?.*Page=1.*PageToken=PA/,
    );

    const p1 = await sdk.client.calls.page({ pageSize: 1 });
    expect(p1.instances).toHaveLength(1);
    expect(p1.previousPageUrl).toBeUndefined();
    const p2 = await p1.nextPage();
    expect(p2?.instances).toHaveLength(1);
    expect(p2?.instances[0]?.sid).not.toBe(p1.instances[0]?.sid);
    expect(p2?.nextPageUrl).toBeUndefined();
    const back = await p2?.previousPage();
    expect(back?.instances[0]?.sid).toBe(p1.instances[0]?.sid);
  });

  it('absent page links are JSON null on 2010-04-01 and the string "null" on 2012-04-24', async () => {
    const auth = w.owner.creds;
    const twilioPage = await w.ts.request(
      'GET',
      `/2010-04-01/Accounts/${w.owner.sid}/Calls.json?PageSize=1&Page=1&PageToken=PAnothing`,
      { auth },
    );
    expect(twilioPage.status).toBe(200);
    expect(twilioPage.json).toMatchObject({ page: 1, page_size: 1, start: 1, end: 1, next_page_uri: null });
    expect(twilioPage.json.previous_page_uri).toMatch(/^\/2010-04-01\/Accounts\/.*\/Calls\.json\?.*Page=0/);
    expect(twilioPage.json.first_page_uri).toMatch(/^\/2010-04-01\//);
    expect(twilioPage.json.uri).toMatch(/^\/2010-04-01\/.*Page=1/);
    expect(twilioPage.json).not.toHaveProperty('num_pages');
    const nativePage = await w.ts.request(
      'GET',
      `${API}/Accounts/${w.owner.sid}/Calls.json?PageSize=1&Page=1`,
      {
        auth,
      },
    );
    expect(nativePage.json.next_page_uri).toBe('null');
    const first = await w.ts.request('GET', `${API}/Accounts/${w.owner.sid}/Calls.json?PageSize=1`, { auth });
    expect(first.json.previous_page_uri).toBe('null');
  });

  it('sends a message through the SMSC and lists it', async () => {
    w.smsc.behaviour.receiptDelayMs = 50;
    const m = await sdk.client.messages.create({
      from: w.number,
      to: '+15551230010',
      body: 'Hello from the SDK',
      statusCallback: `${w.hooks.origin}/sms-status`,
    });
    expect(m.sid).toMatch(/^SM[0-9a-f]{32}$/);
    expect(m.body).toBe('Hello from the SDK');
    expect(m.uri).toBe(`/2010-04-01/Accounts/${w.owner.sid}/Messages/${m.sid}.json`);
    expect(['queued', 'sending', 'sent']).toContain(m.status);
    await waitFor(
      () => w.smsc.received.some((p) => p.command === 'submit_sm' && smText(p.pdu) === 'Hello from the SDK'),
      10_000,
      'submit_sm at the SMSC',
    );
    const delivered = await until(
      () => sdk.client.messages(m.sid).fetch(),
      (x) => x.status === 'delivered',
    );
    expect(delivered.status).toBe('delivered');
    expect(delivered.direction).toBe('outbound-api');
    const listed = await sdk.client.messages.list({ to: '+15551230010', limit: 5 });
    expect(listed.map((x) => x.sid)).toContain(m.sid);
    await waitFor(() => w.hooks.requestsTo('/sms-status').length >= 2, 10_000, 'message status callbacks');
    expectSigned('/sms-status', 2);
  });

  it('buys a number, sets its VoiceUrl, and an inbound call fetches that URL', async () => {
    const bought = await sdk.client.incomingPhoneNumbers.create({ phoneNumber: '+14155550101' });
    expect(bought.sid).toMatch(/^PN[0-9a-f]{32}$/);
    expect(bought.phoneNumber).toBe('+14155550101');
    expect(bought.capabilities).toEqual({ voice: true, sms: true, mms: false, fax: false });
    expect(bought.voiceUrl).toBeNull();
    w.hooks.script('/inbound', markup('<Say>Hello</Say><Pause length="1"/><Hangup/>'));
    const updated = await sdk.client
      .incomingPhoneNumbers(bought.sid)
      .update({ voiceUrl: `${w.hooks.origin}/inbound`, friendlyName: 'Front desk' });
    expect(updated.voiceUrl).toBe(`${w.hooks.origin}/inbound`);
    expect(updated.friendlyName).toBe('Front desk');
    const listed = await sdk.client.incomingPhoneNumbers.list({ phoneNumber: '+14155550101' });
    expect(listed.map((n) => n.sid)).toEqual([bought.sid]);

    const target = `127.0.0.1:${w.ts.server.sip?.stack.port}`;
    const r = await runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: '+14155550101' });
    expect(r.errors).toBe('');
    const [hook] = expectSigned('/inbound', 1);
    expect(new URLSearchParams(hook?.rawBody.toString()).get('To')).toBe('+14155550101');
    expect(await sdk.client.incomingPhoneNumbers(bought.sid).remove()).toBe(true);
    await expect(sdk.client.incomingPhoneNumbers(bought.sid).fetch()).rejects.toMatchObject({ status: 404 });
  });

  it('creates an application with a VoiceUrl (stored as the native RcmlUrl)', async () => {
    const app = await sdk.client.applications.create({
      friendlyName: 'IVR',
      voiceUrl: `${w.hooks.origin}/ivr`,
    });
    expect(app.sid).toMatch(/^AP[0-9a-f]{32}$/);
    expect(app.voiceUrl).toBe(`${w.hooks.origin}/ivr`);
    const native = await w.ts.request('GET', `${API}/Accounts/${w.owner.sid}/Applications/${app.sid}.json`, {
      auth: w.owner.creds,
    });
    expect(native.json).toMatchObject({ rcml_url: `${w.hooks.origin}/ivr`, kind: 'voice' });
    const fetched = await sdk.client.applications(app.sid).fetch();
    expect(fetched.friendlyName).toBe('IVR');
    expect((await sdk.client.applications.list()).map((a) => a.sid)).toContain(app.sid);
    await expect(
      sdk.client.applications.create({ friendlyName: 'x', voiceFallbackUrl: `${w.hooks.origin}/f` }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('VoiceFallbackUrl') });
  });

  it('fetches a recording and its media', async () => {
    const rec = await w.ts.server.recordings.create({
      accountSid: w.owner.sid,
      callSid: callSids[0] as string,
      durationSeconds: 1,
      wav: tone(1),
    });
    const fetched = await sdk.client.recordings(rec.sid).fetch();
    expect(fetched).toMatchObject({ sid: rec.sid, callSid: callSids[0], duration: '1', status: 'completed' });
    expect(fetched.mediaUrl).toMatch(
      /\/2010-04-01\/Accounts\/AC[0-9a-f]{32}\/Recordings\/RE[0-9a-f]{32}\.wav$/,
    );
    const media = await fetch(fetched.mediaUrl);
    expect(media.status).toBe(200);
    expect(media.headers.get('content-type')).toMatch(/audio\/(x-)?wav/);
    expect((await sdk.client.recordings.list({ callSid: callSids[0] })).map((r) => r.sid)).toEqual([rec.sid]);
  });

  it('fetches the account, whose subresource_uris the SDK can follow', async () => {
    const acct = await sdk.client.api.v2010.accounts(w.owner.sid).fetch();
    expect(acct.sid).toBe(w.owner.sid);
    expect(acct.status).toBe('active');
    expect(Object.keys(acct.subresourceUris).sort()).toEqual([
      'applications',
      'calls',
      'incoming_phone_numbers',
      'messages',
      'notifications',
      'recordings',
    ]);
  });

  it('lists notifications and maps errors onto RestException', async () => {
    await expect(sdk.client.calls('CA00000000000000000000000000000000').fetch()).rejects.toMatchObject({
      status: 404,
      code: 20404,
    });
    // A refused write is recorded as a Notification (native rule), visible through the SDK.
    await expect(
      sdk.client.calls.create({ from: '+15550001000', to: '+15550002000', twiml: '<Response/>' }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('Twiml') });
    await expect(
      sdk.client.calls.create({ from: '+15550001000', to: '+15550002000', url: 'not a url' }),
    ).rejects.toMatchObject({ status: 400 });
    const notes = await until(
      () => sdk.client.notifications.list({ limit: 20 }),
      (l) => l.length > 0,
    );
    expect(notes[0]?.sid).toMatch(/^NO[0-9a-f]{32}$/);
    const one = await sdk.client.notifications(notes[0]?.sid as string).fetch();
    expect(one.accountSid).toBe(w.owner.sid);
  });
});
