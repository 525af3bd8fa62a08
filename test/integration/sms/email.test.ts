/**
 * Email over SMTP (spec §Email) against a real `smtp-server` on loopback: To, CC and
 * BCC all reach the server as recipients, BCC never shows in the headers, Type sets the
 * Content-Type; the `<Email>` verb of SMS markup goes the same way; bad input and a service without
 * SMTP_URL give documented errors.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, startTestServer, type TestServer } from '../../support/server.js';
import { buyNumber, createAccount, type SmsWorld, startSmsWorld, stopSmsWorld, waitFor } from './support.js';

interface Mail {
  readonly from: string;
  readonly rcpt: string[];
  readonly raw: string;
}

const mails: Mail[] = [];
let smtp: SMTPServer;
let smtpPort: number;
let w: SmsWorld;

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcpt: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  smtpPort = (smtp.server.address() as AddressInfo).port;
  w = await startSmsWorld({
    label: 'smsemail',
    env: { SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, SMTP_FROM: 'noreply@switchboard.test' },
  });
});
afterAll(async () => {
  await stopSmsWorld(w);
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

const emailPath = () => `${API}/Accounts/${w.owner.sid}/Email/Messages`;

describe('POST /Email/Messages', () => {
  it('sends to a real SMTP server with CC, BCC and Type honoured', async () => {
    const r = await w.ts.request('POST', `${emailPath()}.json`, {
      auth: w.owner.creds,
      form: {
        From: 'alice@example.test',
        To: 'bob@example.test',
        CC: 'carol@example.test, dave@example.test',
        BCC: 'eve@example.test',
        Subject: 'Quarterly report',
        Body: '<h1>Hello</h1><p>Numbers are up.</p>',
        Type: 'text/html',
      },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      account_sid: w.owner.sid,
      from: 'alice@example.test',
      to: 'bob@example.test',
      subject: 'Quarterly report',
      body: '<h1>Hello</h1><p>Numbers are up.</p>',
    });
    expect(r.json.date_sent).toMatch(/\+0000$/);
    await waitFor(() => mails.length === 1, 5000, 'mail received');
    const m = mails[0]!;
    expect(m.from).toBe('alice@example.test');
    expect(m.rcpt.sort()).toEqual([
      'bob@example.test',
      'carol@example.test',
      'dave@example.test',
      'eve@example.test',
    ]);
    expect(m.raw).toMatch(/^Subject: Quarterly report$/m);
    expect(m.raw).toMatch(/^Cc: carol@example.test, dave@example.test$/m);
    expect(m.raw).not.toMatch(/^Bcc:/im);
    expect(m.raw).not.toContain('eve@example.test');
    expect(m.raw).toMatch(/^Content-Type: text\/html/m);
    expect(m.raw).toContain('<h1>Hello</h1>');
  });

  it('plain text by default; XML representation', async () => {
    const r = await w.ts.request('POST', emailPath(), {
      auth: w.owner.creds,
      form: { From: 'alice@example.test', To: 'bob@example.test', Subject: 'Plain', Body: 'just text' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.text).toContain('<EmailMessage>');
    expect(r.text).toContain('<Subject>Plain</Subject>');
    await waitFor(() => mails.length === 2, 5000, 'mail received');
    expect(mails[1]!.raw).toMatch(/^Content-Type: text\/plain/m);
  });

  it('bad input: Subject of 161 characters, missing fields, bad addresses', async () => {
    const base = { From: 'alice@example.test', To: 'bob@example.test', Subject: 'S', Body: 'B' };
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ ...base, Subject: 's'.repeat(161) }, 21100, 'Subject'],
      [{ ...base, Subject: '' }, 21101, 'Subject'],
      [{ To: base.To, Subject: 'S', Body: 'B' }, 21101, 'From'],
      [{ From: base.From, Subject: 'S', Body: 'B' }, 21101, 'To'],
      [{ From: base.From, To: base.To, Subject: 'S' }, 21101, 'Body'],
      [{ ...base, To: 'not an address' }, 21100, 'To'],
      [{ ...base, CC: 'x@y.test, nope' }, 21100, 'CC'],
      [{ ...base, Type: 'html' }, 21100, 'Type'],
    ];
    const before = mails.length;
    for (const [form, code, mention] of cases) {
      const r = await w.ts.request('POST', `${emailPath()}.json`, { auth: w.owner.creds, form });
      expect(r.status, JSON.stringify(form)).toBe(400);
      expect(r.json.code, JSON.stringify(form)).toBe(code);
      expect(r.json.message).toContain(mention);
    }
    const ok160 = await w.ts.request('POST', `${emailPath()}.json`, {
      auth: w.owner.creds,
      form: { ...base, Subject: 's'.repeat(160) },
    });
    expect(ok160.status).toBe(200);
    await waitFor(() => mails.length === before + 1, 5000, 'the 160-character subject is accepted');
  });

  it('the <Email> verb of SMS markup uses the same path (default From from SMTP_FROM)', async () => {
    w.hooks.script('/sms', {
      body: '<Response><Email to="ops@example.test" subject="Inbound SMS" cc="boss@example.test">Got a text</Email></Response>',
    });
    const before = mails.length;
    w.smsc.deliverMo({
      from: '15557650000',
      to: '14155550100',
      dataCoding: 0,
      udh: false,
      shortMessage: Buffer.from('hello'),
    });
    await waitFor(() => mails.length === before + 1, 5000, 'verb mail');
    const m = mails.at(-1)!;
    expect(m.from).toBe('noreply@switchboard.test');
    expect(m.rcpt.sort()).toEqual(['boss@example.test', 'ops@example.test']);
    expect(m.raw).toMatch(/^Subject: Inbound SMS$/m);
    expect(m.raw).toContain('Got a text');
  });
});

describe('without SMTP_URL (and without SMPP_URL)', () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer({ label: 'smsnoconf', env: { NUMBER_POOL: '+14155550100-+14155550199' } });
  });
  afterAll(async () => {
    await ts?.dispose();
  });

  it('email → 503 21710 EmailNotConfigured; SMS to a number → 503 21612; documented errors', async () => {
    const acct = await createAccount(ts, 'noconf@example.test');
    const r = await ts.request('POST', `${API}/Accounts/${acct.sid}/Email/Messages.json`, {
      auth: acct.creds,
      form: { From: 'a@example.test', To: 'b@example.test', Subject: 'S', Body: 'B' },
    });
    expect(r.status).toBe(503);
    expect(r.json.code).toBe(21710);
    expect(r.json.message).toContain('SMTP_URL');
    await buyNumber(ts, acct, '+14155550120');
    const s = await ts.request('POST', `${API}/Accounts/${acct.sid}/SMS/Messages.json`, {
      auth: acct.creds,
      form: { From: '+14155550120', To: '+15550001111', Body: 'x' },
    });
    expect(s.status).toBe(503);
    expect(s.json.code).toBe(21612);
  });
});
