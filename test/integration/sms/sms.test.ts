/**
 * SMS end to end against a local SMSC (npm `smpp` server) and a webhook server: send over the API
 * (record before 2xx, TLV 0x060E from the multi-provider configuration), receipts → delivered /
 * undelivered callbacks (signed), MO → SmsUrl markup → `<Sms>` reply submitted, 12003 without an
 * SMS URL, long UCS-2 split and reassembled, list filters and every SortBy, bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientDelivery } from '../../../src/actors/sms/client-messenger.js';
import { encodeMessage } from '../../../src/smpp/encoding.js';
import { verifyTwilioSignature } from '../../../src/webhooks/index.js';
import { API, type Credentials } from '../../support/server.js';
import { XMLParser } from '../../support/xml.js';
import {
  buyNumber,
  createAccount,
  formOf,
  type SmsWorld,
  startSmsWorld,
  stopSmsWorld,
  waitFor,
} from './support.js';

let w: SmsWorld;
const as = (creds: Credentials, form?: Record<string, string>) =>
  form ? { auth: creds, form } : { auth: creds };
const post = (form: Record<string, string>, creds: Credentials = w.owner.creds, base = w.base) =>
  w.ts.request('POST', `${base}.json`, as(creds, form));
const get = (path: string, creds: Credentials = w.owner.creds) => w.ts.request('GET', path, as(creds));
const submitsTo = (dest: string) => w.smsc.submits().filter((p) => p.destination_addr === dest);

beforeAll(async () => {
  w = await startSmsWorld({ label: 'smsapi' });
  w.hooks.script('/status', { status: 204 });
});
afterAll(async () => {
  await stopSmsWorld(w);
});

describe('send', () => {
  it('records before answering 201 with status sending, submits, and sends TLV 0x060E only when configured', async () => {
    const r = await post({ From: w.number, To: '+15551230001', Body: 'Hello there' });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({
      from: w.number,
      to: '+15551230001',
      body: 'Hello there',
      status: 'sending',
      direction: 'outbound-api',
      account_sid: w.owner.sid,
      api_version: '2012-04-24',
      price_unit: 'USD',
      error_code: null,
    });
    expect(r.json.sid).toMatch(/^SM[0-9a-f]{32}$/);
    expect(r.json.uri).toBe(`${w.base}/${r.json.sid}.json`);
    expect(r.headers.get('location')).toMatch(new RegExp(`^https?://[^/]+${w.base}/${r.json.sid}$`));
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    // The record is in Postgres when the API answers.
    expect((await w.ts.server.smsStore.get(w.owner.sid, r.json.sid))?.body).toBe('Hello there');
    await waitFor(() => submitsTo('15551230001').length === 1, 5000, 'submit');
    const pdu = submitsTo('15551230001')[0]!;
    expect(pdu.source_addr).toBe('14155550100');
    expect(pdu.dest_network_id).toBeUndefined();
    await waitFor(
      async () => (await get(`${w.base}/${r.json.sid}.json`)).json.status === 'sent',
      5000,
      'sent',
    );

    // Multi-provider outbound-sms (another account): destination_network_id goes out as TLV 1550 (0x060E).
    const routed = await createAccount(w.ts, 'sms-routed@example.test');
    await buyNumber(w.ts, routed, '+14155550102');
    const cfg = { 'outbound-sms': [{ destination_network_id: '31337' }] };
    const ext = await w.ts.request('POST', `${API}/ExtensionsConfiguration.json`, {
      form: {
        ExtensionName: 'multi_provider',
        Enabled: 'true',
        ConfigurationData: JSON.stringify(cfg),
        AccountSid: routed.sid,
      },
    });
    expect(ext.status, ext.text).toBe(201);
    const r2 = await post(
      { From: '+14155550102', To: '+15551230002', Body: 'Routed' },
      routed.creds,
      `${API}/Accounts/${routed.sid}/SMS/Messages`,
    );
    expect(r2.status, r2.text).toBe(201);
    await waitFor(() => submitsTo('15551230002').length === 1, 5000, 'submit with TLV');
    expect(submitsTo('15551230002')[0]?.dest_network_id).toBe('31337');
    expect(submitsTo('15551230002')[0]?.source_addr).toBe('14155550102');
  });

  it('delivery receipts → delivered / undelivered, with signed sent and delivery callbacks', async () => {
    w.smsc.behaviour.receiptDelayMs = 50;
    w.smsc.behaviour.receiptStat = (dest) => (dest.endsWith('99') ? 'UNDELIV' : 'DELIVRD');
    const cb = `${w.hooks.origin}/status`;
    const ok = await post({ From: w.number, To: '+15551230010', Body: 'Will arrive', StatusCallback: cb });
    const ko = await post({
      From: w.number,
      To: '+15551230099',
      Body: 'Will not arrive',
      StatusCallback: cb,
    });
    expect(ok.status).toBe(201);
    const callbacksOf = (sid: string) =>
      w.hooks
        .requestsTo('/status')
        .map((r) => ({ r, f: formOf(r.rawBody) }))
        .filter((x) => x.f.MessageSid === sid);
    await waitFor(
      () => callbacksOf(ok.json.sid).length === 2 && callbacksOf(ko.json.sid).length === 2,
      8000,
      'callbacks',
    );
    const okCalls = callbacksOf(ok.json.sid);
    expect(okCalls.map((c) => c.f.MessageStatus)).toEqual(['sent', 'delivered']);
    expect(okCalls[1]?.f).toMatchObject({
      AccountSid: w.owner.sid,
      From: w.number,
      To: '+15551230010',
      Body: 'Will arrive',
    });
    expect(okCalls[1]?.f.ErrorCode).toBeUndefined();
    const token = w.owner.creds.secret;
    for (const c of okCalls) {
      expect(verifyTwilioSignature(cb, c.f, token, c.r.headers['x-twilio-signature'] as string)).toBe(true);
    }
    // Each event has its own stable idempotency token.
    expect(okCalls[0]?.r.headers['i-twilio-idempotency-token']).toBe(`${ok.json.sid}-sent`);
    const koCalls = callbacksOf(ko.json.sid);
    expect(koCalls.map((c) => c.f.MessageStatus)).toEqual(['sent', 'undelivered']);
    // The test SMSC reports UNDELIV with err:001 (unknown subscriber).
    expect(koCalls[1]?.f.ErrorCode).toBe('30005');
    const koMsg = await get(`${w.base}/${ko.json.sid}.json`);
    expect(koMsg.json).toMatchObject({
      status: 'undelivered',
      error_code: '30005',
      error_message: 'Unknown destination handset',
    });
    expect((await get(`${w.base}/${ok.json.sid}.json`)).json.status).toBe('delivered');
    expect((await get(`${w.base}/${ok.json.sid}.json`)).json.date_sent).toMatch(/\+0000$/);
    w.smsc.behaviour.receiptDelayMs = null;
  });

  it('forwarding refused by the SMSC → failed with the mapped error code and one failed callback', async () => {
    w.smsc.behaviour.submitStatus = 0x0b; // ESME_RINVDSTADR
    w.smsc.behaviour.receiptDelayMs = 20;
    const cb = `${w.hooks.origin}/status`;
    const r = await post({ From: w.number, To: '+15551230015', Body: 'nowhere', StatusCallback: cb });
    expect(r.status).toBe(201);
    await waitFor(
      async () => (await get(`${w.base}/${r.json.sid}.json`)).json.status === 'failed',
      5000,
      'failed',
    );
    w.smsc.behaviour.submitStatus = null;
    expect((await get(`${w.base}/${r.json.sid}.json`)).json).toMatchObject({
      error_code: '30005',
      error_message: 'Unknown destination handset',
    });
    await new Promise((r2) => setTimeout(r2, 200));
    const calls = w.hooks
      .requestsTo('/status')
      .map((x) => formOf(x.rawBody))
      .filter((f) => f.MessageSid === r.json.sid);
    expect(calls.map((f) => [f.MessageStatus, f.ErrorCode])).toEqual([['failed', '30005']]);
    w.smsc.behaviour.receiptDelayMs = null;
  });

  it('a receipt that arrives before submit_sm_resp is still matched (once)', async () => {
    w.smsc.behaviour.receiptDelayMs = 0;
    w.smsc.behaviour.receiptBeforeResp = true;
    w.smsc.behaviour.receiptCopies = 2;
    w.smsc.behaviour.receiptStat = () => 'DELIVRD';
    const cb = `${w.hooks.origin}/status`;
    const r = await post({ From: w.number, To: '+15551230020', Body: 'early', StatusCallback: cb });
    await waitFor(
      async () => (await get(`${w.base}/${r.json.sid}.json`)).json.status === 'delivered',
      8000,
      'delivered',
    );
    await new Promise((r2) => setTimeout(r2, 300));
    const calls = w.hooks
      .requestsTo('/status')
      .map((x) => formOf(x.rawBody))
      .filter((f) => f.MessageSid === r.json.sid);
    expect(calls.map((f) => f.MessageStatus)).toEqual(['sent', 'delivered']);
    w.smsc.behaviour.receiptBeforeResp = false;
    w.smsc.behaviour.receiptCopies = 1;
    w.smsc.behaviour.receiptDelayMs = null;
  });

  it('splits a long UCS-2 message in 67-character parts with UDH; delivered when every part is', async () => {
    w.smsc.behaviour.receiptDelayMs = 20;
    const body = 'Привет, как дела? Это длинное сообщение. '.repeat(4).trim(); // > 140 UCS-2 units
    expect(body.length).toBeGreaterThan(134);
    const r = await post({ From: w.number, To: '+15551230030', Body: body });
    await waitFor(
      async () => (await get(`${w.base}/${r.json.sid}.json`)).json.status === 'delivered',
      8000,
      'delivered',
    );
    const parts = submitsTo('15551230030');
    expect(parts).toHaveLength(Math.ceil(body.length / 67));
    for (const p of parts) {
      expect(p.data_coding).toBe(8);
      expect((p.esm_class ?? 0) & 0x40).toBe(0x40);
    }
    // Reassembled from the parts: UDH (6 octets) then UTF-16BE text.
    const text = parts
      .map((p) => {
        // The library decodes UCS-2 (data_coding 8) and splits off the UDH on the server side.
        const sm = p.short_message as { udh?: unknown; message: string | Buffer } | Buffer;
        if (Buffer.isBuffer(sm)) return Buffer.from(sm.subarray(6)).swap16().toString('utf16le');
        expect(sm.udh).toBeTruthy();
        return typeof sm.message === 'string'
          ? sm.message
          : Buffer.from(sm.message).swap16().toString('utf16le');
      })
      .join('');
    expect(text).toBe(body);
    w.smsc.behaviour.receiptDelayMs = null;
  });
});

describe('client: recipients and SIP MESSAGE (SIP seams with a fake messenger)', () => {
  it('client:<login> goes out through the ClientMessenger; no status callback; failures → 30003', async () => {
    const made = await w.ts.request('POST', `${API}/Accounts/${w.owner.sid}/Clients.json`, {
      auth: w.owner.creds,
      form: { Login: 'alice', Password: 'alice-password-1' },
    });
    expect(made.status, made.text).toBe(201);
    const deliveries: ClientDelivery[] = [];
    w.ts.server.sms.useClientMessenger({
      deliver: async (d) => {
        deliveries.push(d);
        return d.body === 'unreachable'
          ? { status: 480, reason: 'Temporarily Unavailable' }
          : { status: 200, reason: 'OK' };
      },
    });
    const cb = `${w.hooks.origin}/status`;
    const r = await post({ From: w.number, To: 'client:alice', Body: 'to the app', StatusCallback: cb });
    expect(r.status, r.text).toBe(201);
    expect(r.json.to).toBe('client:alice');
    await waitFor(
      async () => (await get(`${w.base}/${r.json.sid}.json`)).json.status === 'sent',
      5000,
      'sent to client',
    );
    expect(deliveries[0]).toMatchObject({
      login: 'alice',
      body: 'to the app',
      from: w.number,
      accountSid: w.owner.sid,
    });
    const bad = await post({ From: w.number, To: 'client:alice', Body: 'unreachable' });
    await waitFor(
      async () => (await get(`${w.base}/${bad.json.sid}.json`)).json.status === 'failed',
      5000,
      'failed',
    );
    expect((await get(`${w.base}/${bad.json.sid}.json`)).json.error_code).toBe('30003');
    await new Promise((r2) => setTimeout(r2, 200));
    const callbacks = w.hooks
      .requestsTo('/status')
      .filter((x) => formOf(x.rawBody).MessageSid === r.json.sid);
    expect(callbacks).toHaveLength(0);
    expect(submitsTo('client:alice')).toHaveLength(0);

    // Inbound SIP MESSAGE: client-to-client is relayed; to a number it runs the number's SMS markup.
    expect(
      await w.ts.server.sms.receiveSipMessage({
        from: 'client:bob',
        to: 'alice',
        body: 'hi alice',
        client: { accountSid: w.owner.sid, login: 'bob' },
      }),
    ).toBe(202);
    await waitFor(() => deliveries.some((d) => d.body === 'hi alice'), 5000, 'relayed');
    expect(deliveries.find((d) => d.body === 'hi alice')).toMatchObject({
      from: 'client:bob',
      login: 'alice',
    });
    expect(
      await w.ts.server.sms.receiveSipMessage({
        from: 'client:bob',
        to: 'nobody',
        body: 'x',
        client: { accountSid: w.owner.sid, login: 'bob' },
      }),
    ).toBe(404);
    w.hooks.script('/sms', { body: '<Response><Sms>pong</Sms></Response>' });
    expect(
      await w.ts.server.sms.receiveSipMessage({
        from: 'sip:+15557650001@carrier.test',
        to: '+14155550100',
        body: 'ping',
      }),
    ).toBe(202);
    await waitFor(
      () => w.hooks.requestsTo('/sms').some((x) => formOf(x.rawBody).Body === 'ping'),
      5000,
      'SmsUrl fetched',
    );
    expect(
      await w.ts.server.sms.receiveSipMessage({ from: 'x', to: '+19999999999', body: 'nobody home' }),
    ).toBe(404);
    w.ts.server.sms.useClientMessenger(null);
    const m = w.ts.server.sms.metrics();
    expect(m.TextMessageInboundToClient).toBe(1);
    expect(m.TextMessageNotFound).toBeGreaterThanOrEqual(2);
    expect(m.TextMessageInboundToApp).toBeGreaterThanOrEqual(1);
    expect(m.TextMessageOutbound).toBeGreaterThan(3);
  });
});

describe('inbound (MO)', () => {
  it('deliver_sm → SmsUrl with the message parameters → <Sms> reply submitted to the sender', async () => {
    w.hooks.script('/sms', {
      body: '<?xml version="1.0"?><Response><Sms>Thanks, got it</Sms></Response>',
    });
    const before = w.hooks.requestsTo('/sms').length;
    w.smsc.deliverMo({
      from: '15557654321',
      to: '14155550100',
      dataCoding: 0,
      udh: false,
      shortMessage: Buffer.from('Hi from a phone'),
    });
    await waitFor(() => w.hooks.requestsTo('/sms').length > before, 5000, 'SmsUrl fetch');
    const req = w.hooks.requestsTo('/sms').at(-1)!;
    const f = formOf(req.rawBody);
    expect(f).toMatchObject({
      From: '+15557654321',
      To: '+14155550100',
      Body: 'Hi from a phone',
      AccountSid: w.owner.sid,
      SmsStatus: 'received',
    });
    expect(req.headers['x-twilio-signature']).toBeTruthy();
    await waitFor(() => submitsTo('15557654321').length === 1, 5000, 'reply submit');
    const reply = submitsTo('15557654321')[0]!;
    expect(reply.source_addr).toBe('14155550100');
    const inbound = await get(`${w.base}/${f.MessageSid}.json`);
    expect(inbound.json).toMatchObject({
      status: 'received',
      direction: 'incoming',
      body: 'Hi from a phone',
    });
  });

  it('a long UCS-2 MO is reassembled before the SmsUrl request', async () => {
    const body = 'Ответ: да, конечно! Увидимся завтра в десять утра. '.repeat(3).trim();
    const m = encodeMessage(body, 'auto', 42);
    expect(m.segments.length).toBeGreaterThan(1);
    w.hooks.script('/sms', { body: '<Response/>' });
    for (const seg of m.segments) {
      w.smsc.deliverMo({
        from: '15557654322',
        to: '14155550100',
        dataCoding: 8,
        udh: true,
        shortMessage: seg.shortMessage,
      });
    }
    await waitFor(
      () => w.hooks.requestsTo('/sms').some((r) => formOf(r.rawBody).From === '+15557654322'),
      5000,
      'SmsUrl fetch',
    );
    const fetched = w.hooks.requestsTo('/sms').filter((r) => formOf(r.rawBody).From === '+15557654322');
    expect(fetched).toHaveLength(1);
    expect(formOf(fetched[0]!.rawBody).Body).toBe(body);
  });

  it('a number without a valid SMS URL → Notification 12003', async () => {
    await buyNumber(w.ts, w.owner, '+14155550101');
    w.smsc.deliverMo({
      from: '15557654323',
      to: '14155550101',
      dataCoding: 0,
      udh: false,
      shortMessage: Buffer.from('anyone?'),
    });
    await waitFor(
      async () =>
        (await get(`${API}/Accounts/${w.owner.sid}/Notifications.json?ErrorCode=12003`)).json.notifications
          .length > 0,
      5000,
      'notification',
    );
    const n = (await get(`${API}/Accounts/${w.owner.sid}/Notifications.json?ErrorCode=12003`)).json
      .notifications[0];
    expect(n.message_text).toContain('+14155550101');
  });
});

describe('list', () => {
  let lister: { sid: string; creds: Credentials };
  let base: string;
  beforeAll(async () => {
    w.smsc.behaviour.receiptDelayMs = null; // the messages stay `sent`
    lister = await createAccount(w.ts, 'sms-lister@example.test');
    await buyNumber(w.ts, lister, '+14155550150');
    await buyNumber(w.ts, lister, '+14155550151');
    base = `${API}/Accounts/${lister.sid}/SMS/Messages`;
    const rows: Array<[string, string, string]> = [
      ['+14155550150', '+15552000003', 'Charlie says hello'],
      ['+14155550151', '+15552000001', 'alpha ORDER 17 shipped'],
      ['+14155550150', '+15552000002', 'Bravo: your order 18'],
    ];
    for (const [From, To, Body] of rows) {
      const r = await post({ From, To, Body }, lister.creds, base);
      expect(r.status).toBe(201);
      await new Promise((r2) => setTimeout(r2, 15)); // distinct DateCreated
    }
    await waitFor(
      async () => {
        const l = await get(`${base}.json`, lister.creds);
        return l.json.messages.every((m: { status: string }) => m.status === 'sent');
      },
      5000,
      'all sent',
    );
  });

  it('filters To, From, Body (partial, case-insensitive) and StartTime/EndTime; envelope and paging', async () => {
    const all = await get(`${base}.json`, lister.creds);
    expect(all.json).toMatchObject({ page: 0, page_size: 50, total: 3, start: 0, end: 2, num_pages: 0 });
    expect(all.json.messages).toHaveLength(3);
    const byTo = await get(`${base}.json?To=%2B15552000001`, lister.creds);
    expect(byTo.json.messages.map((m: { body: string }) => m.body)).toEqual(['alpha ORDER 17 shipped']);
    const byFrom = await get(`${base}.json?From=%2B14155550150`, lister.creds);
    expect(byFrom.json.total).toBe(2);
    const byBody = await get(`${base}.json?Body=order`, lister.creds);
    expect(byBody.json.total).toBe(2);
    const full = await get(`${base}.json?Body=${encodeURIComponent('Charlie says hello')}`, lister.creds);
    expect(full.json.total).toBe(1);
    const literal = await get(`${base}.json?Body=%25`, lister.creds);
    expect(literal.json.total).toBe(0);
    const today = new Date().toISOString().slice(0, 10);
    expect((await get(`${base}.json?StartTime=${today}&EndTime=${today}`, lister.creds)).json.total).toBe(3);
    expect((await get(`${base}.json?EndTime=2001-01-01`, lister.creds)).json.total).toBe(0);
    const page = await get(`${base}.json?PageSize=2&Page=0`, lister.creds);
    expect(page.json.messages).toHaveLength(2);
    expect(page.json.num_pages).toBe(1);
    expect(page.json.next_page_uri).toContain('AfterSid=');
    const xml = await get(`${base}?PageSize=1`, lister.creds);
    const doc = new XMLParser().parse(xml.text);
    expect(doc.ServiceResponse.SMSMessages['@total']).toBe(3);
    expect(doc.ServiceResponse.SMSMessages.SMSMessage.Body).toBe('Charlie says hello');
  });

  it('sorts by every SortBy attribute, both directions', async () => {
    const order = async (sortBy: string, field: string) =>
      (await get(`${base}.json?SortBy=${sortBy}`, lister.creds)).json.messages.map(
        (m: Record<string, string>) => m[field],
      );
    expect(await order('DateCreated:asc', 'body')).toEqual([
      'Charlie says hello',
      'alpha ORDER 17 shipped',
      'Bravo: your order 18',
    ]);
    expect(await order('DateCreated:desc', 'body')).toEqual([
      'Bravo: your order 18',
      'alpha ORDER 17 shipped',
      'Charlie says hello',
    ]);
    expect(await order('To', 'to')).toEqual(['+15552000001', '+15552000002', '+15552000003']);
    expect(await order('To:desc', 'to')).toEqual(['+15552000003', '+15552000002', '+15552000001']);
    expect(await order('From:asc', 'from')).toEqual(['+14155550150', '+14155550150', '+14155550151']);
    expect(await order('From:desc', 'from')).toEqual(['+14155550151', '+14155550150', '+14155550150']);
    const bodies = ['Charlie says hello', 'alpha ORDER 17 shipped', 'Bravo: your order 18'];
    const sorted = [...bodies].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const collated = await order('Body:asc', 'body');
    expect(collated).toHaveLength(3);
    expect(new Set(collated)).toEqual(new Set(sorted));
    expect(await order('Body:desc', 'body')).toEqual([...collated].reverse());
    for (const attr of ['Direction', 'Status', 'Price']) {
      for (const dir of ['asc', 'desc']) {
        const r = await get(`${base}.json?SortBy=${attr}:${dir}`, lister.creds);
        expect(r.status, `${attr}:${dir}`).toBe(200);
        expect(r.json.messages).toHaveLength(3);
      }
    }
    // Direction and Status really order: add an inbound message to the lister's number.
    w.hooks.script('/none', { body: '<Response/>' });
    w.smsc.deliverMo({
      from: '15559990000',
      to: '14155550151',
      dataCoding: 0,
      udh: false,
      shortMessage: Buffer.from('zz inbound'),
    });
    await waitFor(
      async () => (await get(`${base}.json`, lister.creds)).json.total === 4,
      5000,
      'inbound listed',
    );
    expect((await order('Direction:asc', 'direction'))[0]).toBe('incoming');
    expect((await order('Direction:desc', 'direction'))[0]).toBe('outbound-api');
    expect((await order('Status:asc', 'status'))[0]).toBe('received');
    expect((await order('Status:desc', 'status'))[0]).toBe('sent');
  });

  it('unknown SortBy → 400 21100; other accounts see nothing; ProvisioningAgent never sees text', async () => {
    for (const bad of ['Color', 'Body:up', 'DateCreated:asc:x']) {
      const r = await get(`${base}.json?SortBy=${bad}`, lister.creds);
      expect(r.status, bad).toBe(400);
      expect(r.json.code).toBe(21100);
      expect(r.json.message).toContain('SortBy');
    }
    const one = (await get(`${base}.json`, lister.creds)).json.messages[0];
    expect((await get(`${w.base}/${one.sid}.json`)).status).toBe(404);
    // A ProvisioningAgent sub-account: its parent sends from the agent account's number.
    const agent = await w.ts.request('POST', `${API}/Accounts.json`, {
      auth: lister.creds,
      form: { EmailAddress: 'sms-agent@example.test', Password: 'password-123', Role: 'ProvisioningAgent' },
    });
    expect(agent.status, agent.text).toBe(201);
    const agentAcct = { sid: agent.json.sid as string, creds: lister.creds };
    await buyNumber(w.ts, agentAcct, '+14155550160');
    const creds = { user: agent.json.sid as string, secret: agent.json.auth_token as string };
    const agentBase = `${API}/Accounts/${agentAcct.sid}/SMS/Messages`;
    const secret = await post(
      { From: '+14155550160', To: '+15552000009', Body: 'secret ORDER text' },
      lister.creds,
      agentBase,
    );
    expect(secret.status, secret.text).toBe(201);
    expect(secret.json.body).toBe('secret ORDER text'); // the Administrator parent may read it
    const mine = await post(
      { From: '+14155550160', To: '+15552000009', Body: 'agent ORDER text' },
      creds,
      agentBase,
    );
    expect(mine.status, mine.text).toBe(201);
    expect(mine.json.body).toBeNull();
    const seen = await get(`${agentBase}.json`, creds);
    expect(seen.status, seen.text).toBe(200);
    expect(seen.json.messages).toHaveLength(2);
    expect(seen.json.messages.every((m: { body: unknown }) => m.body === null)).toBe(true);
    expect(seen.text).not.toContain('ORDER');
    expect((await get(`${agentBase}/${secret.json.sid}.json`, creds)).json.body).toBeNull();
    expect((await get(`${agentBase}/${secret.json.sid}`, creds)).text).not.toContain('ORDER');
    expect((await get(`${agentBase}.json?Body=order`, creds)).status).toBe(403);
    expect((await get(`${agentBase}.json?SortBy=Body`, creds)).status).toBe(403);
  });
});

describe('bad input', () => {
  it('missing Body, From not owned, bad To, missing From/To, Body too long, bad StatusCallback', async () => {
    const cases: Array<[Record<string, string>, number, number, string]> = [
      [{ From: w.number, To: '+15551230040' }, 400, 21602, 'Body'],
      [{ From: w.number, To: '+15551230040', Body: '' }, 400, 21602, 'Body'],
      [{ From: '+14155550199', To: '+15551230040', Body: 'x' }, 400, 21606, '+14155550199'],
      [{ From: w.number, To: 'not-a-number', Body: 'x' }, 400, 21211, 'not-a-number'],
      [{ From: w.number, To: 'client:nobody', Body: 'x' }, 400, 21211, 'client:nobody'],
      [{ To: '+15551230040', Body: 'x' }, 400, 21101, 'From'],
      [{ From: w.number, Body: 'x' }, 400, 21101, 'To'],
      [{ From: w.number, To: '+15551230040', Body: 'x'.repeat(1601) }, 400, 21617, '1601'],
      [
        { From: w.number, To: '+15551230040', Body: 'x', StatusCallback: 'ftp://x' },
        400,
        21100,
        'StatusCallback',
      ],
    ];
    for (const [form, status, code, mention] of cases) {
      const r = await post(form);
      expect(r.status, JSON.stringify(form)).toBe(status);
      expect(r.json.code, JSON.stringify(form)).toBe(code);
      expect(r.json.message).toContain(mention);
      expect(r.json.more_info).toContain(String(code));
    }
    // Another account's number is not ours either.
    const other = await createAccount(w.ts, 'sms-other@example.test');
    const theirs = await post(
      { From: w.number, To: '+15551230041', Body: 'x' },
      other.creds,
      `${API}/Accounts/${other.sid}/SMS/Messages`,
    );
    expect(theirs.json.code).toBe(21606);
    expect((await get(`${w.base}/SM00000000000000000000000000000000.json`)).status).toBe(404);
    expect(submitsTo('15551230040')).toHaveLength(0);
  });
});
