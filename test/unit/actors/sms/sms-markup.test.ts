/** SMS markup runner with fake webhook client, stores and senders. */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  MAX_SMS_REDIRECTS,
  runSmsMarkup,
  type SmsMarkupDeps,
} from '../../../../src/actors/sms/sms-markup.js';
import { toE164 } from '../../../../src/actors/sms/sms-service.js';
import { AppError } from '../../../../src/errors.js';
import type { NotifyInput } from '../../../../src/notifications/notifier.js';
import type { Account } from '../../../../src/store/account-store.js';
import type { IncomingNumber } from '../../../../src/store/number-store.js';
import type { SmsMessage } from '../../../../src/store/sms-store.js';
import type { WebhookRequest, WebhookResult } from '../../../../src/webhooks/index.js';

const account = { sid: 'AC1', authToken: 'token' } as Account;
const number = {
  accountSid: 'AC1',
  phoneNumber: '+14155550100',
  smsApplicationSid: null,
  smsUrl: 'http://app.test/sms',
  smsMethod: 'POST',
  smsFallbackUrl: 'http://app.test/fallback',
  smsFallbackMethod: 'GET',
} as IncomingNumber;
const message = {
  sid: 'SM1',
  accountSid: 'AC1',
  from: '+15557654321',
  to: '+14155550100',
  body: 'hello',
  status: 'received',
  segments: 1,
  apiVersion: '2012-04-24',
} as SmsMessage;

function world(pages: Record<string, string>, opts: { failSms?: boolean } = {}) {
  const requests: WebhookRequest[] = [];
  const notes: NotifyInput[] = [];
  const sms: Array<Record<string, unknown>> = [];
  const emails: Array<Record<string, unknown>> = [];
  const deps: SmsMarkupDeps = {
    webhooks: {
      request: async (req: WebhookRequest): Promise<WebhookResult> => {
        requests.push(req);
        const body = pages[req.url];
        const common = {
          url: req.url,
          method: req.method,
          attempts: 1,
          usedFallback: false,
          idempotencyToken: 't',
        };
        return body === undefined
          ? { ...common, ok: false, kind: 'http-status', errorCode: 11200, message: '404', status: 404 }
          : { ...common, ok: true, status: 200, headers: {}, body, contentType: 'text/xml' };
      },
    },
    applications: { get: async () => null },
    notifier: {
      notify: async (n: NotifyInput) => {
        notes.push(n);
        return null;
      },
    },
    sendSms: async (s) => {
      if (opts.failSms) throw new AppError('SmsFromNotOwned', 'not yours');
      sms.push(s);
      return message;
    },
    sendEmail: async (e) => {
      emails.push(e);
      return {};
    },
    logger: pino({ level: 'silent' }),
  };
  return { deps, requests, notes, sms, emails };
}

describe('runSmsMarkup', () => {
  it('fetches SmsUrl with the message parameters and fallback; <Sms> defaults reply to the sender', async () => {
    const t = world({
      'http://app.test/sms':
        '<Response><Sms>one</Sms><Sms to="+15550000001" from="+14155550100">two</Sms></Response>',
    });
    await runSmsMarkup(t.deps, { message, number, account });
    expect(t.requests[0]).toMatchObject({
      url: 'http://app.test/sms',
      method: 'POST',
      fallback: { url: 'http://app.test/fallback', method: 'GET' },
      authToken: 'token',
    });
    expect(Object.fromEntries(t.requests[0]!.params as Array<[string, string]>)).toMatchObject({
      MessageSid: 'SM1',
      From: '+15557654321',
      To: '+14155550100',
      Body: 'hello',
      SmsStatus: 'received',
    });
    expect(t.sms).toEqual([
      expect.objectContaining({ from: '+14155550100', to: '+15557654321', body: 'one' }),
      expect.objectContaining({ from: '+14155550100', to: '+15550000001', body: 'two' }),
    ]);
  });

  it('follows a relative <Redirect> with its method, then runs <Email>', async () => {
    const t = world({
      'http://app.test/sms': '<Response><Redirect method="GET">next</Redirect><Sms>never</Sms></Response>',
      'http://app.test/next': '<Response><Email to="ops@example.test" subject="S">body</Email></Response>',
    });
    await runSmsMarkup(t.deps, { message, number, account });
    expect(t.requests.map((r) => [r.url, r.method])).toEqual([
      ['http://app.test/sms', 'POST'],
      ['http://app.test/next', 'GET'],
    ]);
    expect(t.sms).toEqual([]);
    expect(t.emails).toEqual([
      expect.objectContaining({ to: 'ops@example.test', subject: 'S', body: 'body', from: null }),
    ]);
  });

  it('<Sms action> sends, then the action markup replaces the rest of the document', async () => {
    const t = world({
      'http://app.test/sms':
        '<Response><Sms action="/after" method="GET">first</Sms><Sms>skipped</Sms></Response>',
      'http://app.test/after': '<Response><Sms>second</Sms></Response>',
    });
    await runSmsMarkup(t.deps, { message, number, account });
    expect(t.sms.map((m) => m.body)).toEqual(['first', 'second']);
    expect(t.requests.map((r) => [r.url, r.method])).toEqual([
      ['http://app.test/sms', 'POST'],
      ['http://app.test/after', 'GET'],
    ]);
  });

  it('no valid SMS URL → Notification 12003, nothing fetched', async () => {
    const t = world({});
    await runSmsMarkup(t.deps, { message, number: { ...number, smsUrl: null }, account });
    expect(t.requests).toEqual([]);
    expect(t.notes).toEqual([expect.objectContaining({ errorCode: 12003, accountSid: 'AC1' })]);
    const u = world({});
    await runSmsMarkup(u.deps, { message, number: { ...number, smsUrl: 'ftp://x/y' }, account });
    expect(u.notes[0]?.errorCode).toBe(12003);
  });

  it('unparsable markup → 12100; a failing verb is notified and the rest runs; redirect loops stop', async () => {
    const bad = world({ 'http://app.test/sms': '<Response><Sms>oops</Response>' });
    await runSmsMarkup(bad.deps, { message, number, account });
    expect(bad.notes[0]?.errorCode).toBe(12100);

    const failing = world(
      { 'http://app.test/sms': '<Response><Sms>x</Sms><Email to="a@b.test">y</Email></Response>' },
      { failSms: true },
    );
    await runSmsMarkup(failing.deps, { message, number, account });
    expect(failing.notes[0]).toMatchObject({ errorCode: 21606 });
    expect(failing.emails).toHaveLength(1);

    const loop = world({ 'http://app.test/sms': '<Response><Redirect>/sms</Redirect></Response>' });
    await runSmsMarkup(loop.deps, { message, number, account });
    expect(loop.requests).toHaveLength(MAX_SMS_REDIRECTS + 1);
    expect(loop.notes.at(-1)?.messageText).toContain('redirected');
  });
});

describe('toE164', () => {
  it('adds + to international digit strings only', () => {
    expect(toE164('15551234567')).toBe('+15551234567');
    expect(toE164('+15551234567')).toBe('+15551234567');
    expect(toE164('12345')).toBe('12345');
    expect(toE164('ACME')).toBe('ACME');
  });
});
