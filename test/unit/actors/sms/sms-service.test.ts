/**
 * The SmsService façade with an in-memory store and a scripted carrier link: record before
 * returning, conditional status writes and their callbacks, link events, graceful close.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SmsService, SmsTimers } from '../../../../src/actors/sms/sms-service.js';
import { resolveSmsTimers } from '../../../../src/actors/sms/sms-timers.js';
import { ErrorCatalog } from '../../../../src/errors.js';
import type {
  CarrierLink,
  MoHandler,
  OutboundSms,
  SmppEvent,
  SubmitResult,
} from '../../../../src/smpp/port.js';
import type { Client } from '../../../../src/store/client-store.js';
import {
  type SmsMessage,
  SmsStatus,
  type SmsStore,
  type SmsTransition,
} from '../../../../src/store/sms-store.js';
import type { WebhookRequest, WebhookResult } from '../../../../src/webhooks/index.js';
import { ACCOUNT_SID, account, deferred, flush, number, silent } from './fixtures.js';

class ScriptedLink implements CarrierLink {
  bound = true;
  closed = 0;
  mo: MoHandler | null = null;
  readonly submits: Array<{ message: OutboundSms; result: ReturnType<typeof deferred<SubmitResult>> }> = [];
  readonly #listeners = new Set<(e: SmppEvent) => void>();
  submit(message: OutboundSms): Promise<SubmitResult> {
    const result = deferred<SubmitResult>();
    this.submits.push({ message, result });
    return result.promise;
  }
  handleMo(handler: MoHandler | null): void {
    this.mo = handler;
  }
  subscribe(listener: (e: SmppEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  emit(e: SmppEvent): void {
    for (const l of this.#listeners) l(e);
  }
  async close(): Promise<void> {
    this.closed++;
  }
}

/** The store as the service uses it: conditional transitions, leases noted. */
function memoryStore() {
  const rows = new Map<string, SmsMessage>();
  const transitions: SmsTransition[] = [];
  const claims: string[] = [];
  const store = {
    insert: async (m: SmsMessage, claim?: { node: string; until: Date }) => {
      rows.set(m.sid, m);
      if (claim) claims.push(`claim ${claim.node} ${claim.until.getTime() - m.dateCreated.getTime()}`);
    },
    getAnyAccount: async (sid: string) => rows.get(sid) ?? null,
    transition: async (t: SmsTransition) => {
      transitions.push(t);
      const m = rows.get(t.sid);
      if (!m || !t.from.includes(m.status)) return null;
      const next = { ...m, status: t.to, errorCode: t.errorCode ?? m.errorCode };
      rows.set(t.sid, next);
      return next;
    },
    findByProviderId: async () => null,
    markSubmitAttempted: async () => {},
    recordSegmentOutcome: async () => {},
    claimPending: async () => [],
    nextForeignLeaseEnd: async () => null,
    renewClaims: async () => {},
    releaseClaims: async (node: string) => void claims.push(`release ${node}`),
  } as Partial<SmsStore> as SmsStore;
  return { store, rows, transitions, claims };
}

let service: SmsService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

function world(opts: { link?: ScriptedLink | null } = {}) {
  const link = opts.link === undefined ? new ScriptedLink() : opts.link;
  const mem = memoryStore();
  const hooks: WebhookRequest[] = [];
  service = new SmsService({
    store: mem.store,
    link,
    numbers: { findByNumber: async (n) => (n === '+14155550100' ? number() : null) },
    applications: { get: async () => null },
    clients: { list: async () => [{ login: 'alice' } as Client] },
    multiProvider: { effectiveMultiProvider: async () => null },
    accounts: { get: async () => account() },
    webhooks: {
      request: async (req) => {
        hooks.push(req);
        return { ok: true } as WebhookResult;
      },
    },
    notifier: { notify: async () => null },
    sendEmail: async () => ({}),
    logger: silent,
    node: 'n1',
    timers: { LEASE_MS: 8_000 },
  });
  return { sms: service, link, hooks, ...mem };
}

const api = {
  account: account(),
  from: '+14155550100',
  to: '+15551234567',
  body: 'hi',
  statusCallback: 'http://app.test/cb',
};

describe('SmsService', () => {
  it('resolves its timers: given ones over the defaults, the sweep a quarter lease', () => {
    expect(resolveSmsTimers({ LEASE_MS: 8_000 })).toMatchObject({
      ...SmsTimers,
      LEASE_MS: 8_000,
      RESUME_INTERVAL_MS: 2_000,
    });
    expect(resolveSmsTimers({ LEASE_MS: 200 }).RESUME_INTERVAL_MS).toBe(100);
    expect(resolveSmsTimers({ RESUME_INTERVAL_MS: 50 }).RESUME_INTERVAL_MS).toBe(50);
  });

  it('records a message under a lease before it returns, then submits it and records each status once', async () => {
    const w = world();
    await w.sms.start();
    const m = await w.sms.send(api);
    expect(m.status).toBe(SmsStatus.Sending);
    expect(w.rows.get(m.sid)).toEqual(m);
    expect(w.claims).toEqual(['release n1', 'claim n1 8000']);
    expect(w.sms.live).toBe(1);
    expect(w.link?.submits[0]?.message).toMatchObject({
      from: '14155550100',
      to: '15551234567',
      reference: m.sid,
    });

    w.link?.submits[0]?.result.resolve({
      messageIds: ['0AB'],
      segments: 1,
      dataCoding: 0,
      possibleDuplicate: false,
    });
    await flush();
    expect(w.transitions).toEqual([
      expect.objectContaining({
        sid: m.sid,
        from: [SmsStatus.Queued, SmsStatus.Sending],
        to: SmsStatus.Sent,
        providerIds: ['ab'],
      }),
    ]);
    expect(w.transitions[0]).not.toHaveProperty('possibleDuplicate');
    w.link?.emit({
      type: 'smpp.receipt',
      messageId: 'ab',
      stat: 'DELIVRD',
      err: null,
      outcome: 'delivered',
      errorCode: null,
      matched: true,
      connection: 'c1',
    });
    await flush();
    expect(w.transitions.map((t) => t.to)).toEqual([SmsStatus.Sent, SmsStatus.Delivered]);
    expect(w.hooks.map((h) => h.idempotencyToken)).toEqual([`${m.sid}-sent`, `${m.sid}-delivered`]);
    expect(w.sms.live).toBe(0);
    expect(w.sms.metrics()).toMatchObject({ TextMessageOutbound: 1, TextMessageInboundToClient: 0 });
  });

  it('queues while the link is down and sends when a connection binds', async () => {
    const link = new ScriptedLink();
    link.bound = false;
    const w = world({ link });
    await w.sms.start();
    const m = await w.sms.send(api);
    expect(m.status).toBe(SmsStatus.Queued);
    expect(link.submits).toEqual([]);
    link.bound = true;
    link.emit({ type: 'smpp.linkState', connection: 'c1', state: 'bound' });
    await flush();
    expect(link.submits).toHaveLength(1);
    expect(w.transitions.map((t) => [t.from, t.to])).toEqual([[[SmsStatus.Queued], SmsStatus.Sending]]);
    expect(w.hooks).toEqual([]); // no callback for `sending`
  });

  it('takes MO through the link handler and refuses to send without an SMSC', async () => {
    const w = world();
    await w.sms.start();
    await w.link?.mo?.({
      type: 'smpp.deliverSm',
      from: '15557654321',
      to: '14155550100',
      body: 'hello',
      dataCoding: 0,
      segments: 1,
      connection: 'c1',
    });
    expect([...w.rows.values()]).toMatchObject([
      { accountSid: ACCOUNT_SID, from: '+15557654321', status: 'received' },
    ]);
    expect(w.sms.metrics().TextMessageInboundToApp).toBe(1);
    await w.sms.close();

    const none = world({ link: null });
    await none.sms.start();
    await expect(none.sms.send(api)).rejects.toMatchObject({ code: ErrorCatalog.SmsNotConfigured.code });
  });

  it('close ends the link once, releases the leases and refuses new messages', async () => {
    const w = world();
    await w.sms.start();
    await Promise.all([w.sms.close(), w.sms.close()]);
    expect(w.link?.closed).toBe(1);
    expect(w.claims).toEqual(['release n1', 'release n1']);
    await expect(w.sms.send(api)).rejects.toMatchObject({ code: ErrorCatalog.Unavailable.code });
  });
});
