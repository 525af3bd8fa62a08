/** Status callbacks: parameters, signing inputs, order per message, bounded drain. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SmsCallbacks } from '../../../../src/actors/sms/sms-callbacks.js';
import { SmsDirection, type SmsMessage, SmsStatus } from '../../../../src/store/sms-store.js';
import type { WebhookRequest, WebhookResult } from '../../../../src/webhooks/index.js';
import { receivedSms } from '../../../support/records.js';
import { ACCOUNT_SID, account, deferred, flush, silent } from './fixtures.js';

function world(request?: (req: WebhookRequest) => Promise<WebhookResult>) {
  const requests: WebhookRequest[] = [];
  const callbacks = new SmsCallbacks({
    accounts: { get: async (sid) => (sid === ACCOUNT_SID ? account({ authToken: 'secret' }) : null) },
    webhooks: {
      request: async (req) => {
        requests.push(req);
        return request ? request(req) : ({ ok: true } as WebhookResult);
      },
    },
    logger: silent,
  });
  return { callbacks, requests };
}

const outbound = (fields: Partial<SmsMessage> = {}) =>
  receivedSms(ACCOUNT_SID, {
    direction: SmsDirection.OutboundApi,
    status: SmsStatus.Sent,
    statusCallback: 'http://app.test/status',
    ...fields,
  });

afterEach(() => {
  vi.useRealTimers();
});

describe('SmsCallbacks', () => {
  it('posts the spec parameters signed with the account token, with a stable idempotency token', async () => {
    const w = world();
    const m = outbound({ status: SmsStatus.Undelivered, errorCode: 30003 });
    w.callbacks.send(m);
    await flush();
    expect(w.requests).toHaveLength(1);
    const req = w.requests[0];
    expect(req).toMatchObject({
      url: 'http://app.test/status',
      method: 'POST',
      accountSid: ACCOUNT_SID,
      authToken: 'secret',
      idempotencyToken: `${m.sid}-undelivered`,
      context: { smsSid: m.sid },
    });
    expect(req?.params).toEqual([
      ['MessageSid', m.sid],
      ['SmsSid', m.sid],
      ['MessageStatus', 'undelivered'],
      ['SmsStatus', 'undelivered'],
      ['AccountSid', ACCOUNT_SID],
      ['From', m.from],
      ['To', m.to],
      ['Body', m.body],
      ['ApiVersion', '2012-04-24'],
      ['ErrorCode', '30003'],
    ]);
  });

  it('sends nothing without a StatusCallback or for an account that is gone', async () => {
    const w = world();
    w.callbacks.send(outbound({ statusCallback: null }));
    w.callbacks.send(outbound({ accountSid: 'AC2' }));
    await flush();
    expect(w.requests).toEqual([]);
  });

  it('keeps the order of one message (sent before delivered) while another goes ahead', async () => {
    const gate = deferred<WebhookResult>();
    const w = world((req) =>
      req.idempotencyToken?.endsWith('-sent') ? gate.promise : Promise.resolve({} as WebhookResult),
    );
    const a = outbound();
    const b = outbound();
    w.callbacks.send(a);
    w.callbacks.send({ ...a, status: SmsStatus.Delivered });
    w.callbacks.send({ ...b, status: SmsStatus.Delivered });
    await flush();
    expect(w.requests.map((r) => r.idempotencyToken)).toEqual([`${a.sid}-sent`, `${b.sid}-delivered`]);
    gate.resolve({} as WebhookResult);
    await flush();
    expect(w.requests.map((r) => r.idempotencyToken)).toEqual([
      `${a.sid}-sent`,
      `${b.sid}-delivered`,
      `${a.sid}-delivered`,
    ]);
  });

  it('drain waits for callbacks in flight, at most the given time', async () => {
    vi.useFakeTimers();
    const hung = world(() => new Promise(() => {}));
    hung.callbacks.send(outbound());
    let drained = false;
    void hung.callbacks.drain(2_000).then(() => {
      drained = true;
    });
    await vi.advanceTimersByTimeAsync(1_999);
    expect(drained).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(drained).toBe(true);
    vi.useRealTimers();
    const quick = world();
    quick.callbacks.send(outbound());
    await quick.callbacks.drain(60_000);
    expect(quick.requests).toHaveLength(1);
  });
});
