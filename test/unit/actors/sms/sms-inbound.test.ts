/** Inbound: addresses as stored, MO retries and refusals, SIP MESSAGE routing, markup runs. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SmsInput } from '../../../../src/actors/sms/sms.types.js';
import type { SmsActor, SmsActorSpawner } from '../../../../src/actors/sms/sms-actors.js';
import { e164OrAsIs, SmsInbound, type SmsInboundDeps } from '../../../../src/actors/sms/sms-inbound.js';
import { AppError } from '../../../../src/errors.js';
import { CommandStatus, type SmppDeliverSmEvent, SmppError } from '../../../../src/smpp/port.js';
import { AccountStatus } from '../../../../src/store/account-store.js';
import type { SmsMessage } from '../../../../src/store/sms-store.js';
import { StoreInputError } from '../../../../src/store/store-errors.js';
import { ACCOUNT_SID, account, number, silent } from './fixtures.js';

describe('e164OrAsIs', () => {
  it('adds + to international digit strings only', () => {
    expect(e164OrAsIs('15551234567')).toBe('+15551234567');
    expect(e164OrAsIs('+15551234567')).toBe('+15551234567');
    expect(e164OrAsIs('12345')).toBe('12345');
    expect(e164OrAsIs('ACME')).toBe('ACME');
  });

  it('follows address.ts: 8 digits or more is a number when its country code exists', () => {
    expect(e164OrAsIs(' 15550100 ')).toBe('+15550100');
    expect(e164OrAsIs('1555010')).toBe('1555010');
    expect(e164OrAsIs('999999999')).toBe('999999999');
    expect(e164OrAsIs('+1 555 123 4567')).toBe('+1 555 123 4567');
  });
});

const mo = (fields: Partial<SmppDeliverSmEvent> = {}): SmppDeliverSmEvent => ({
  type: 'smpp.deliverSm',
  from: '15557654321',
  to: '14155550100',
  body: 'hello',
  dataCoding: 0,
  segments: 1,
  connection: 'c1',
  ...fields,
});

function world(opts: { insert?: (m: SmsMessage) => Promise<void>; send?: SmsInboundDeps['send'] } = {}) {
  const inserted: SmsMessage[] = [];
  const spawned: SmsInput[] = [];
  const sends: Array<Parameters<SmsInboundDeps['send']>> = [];
  const counters = { TextMessageInboundToApp: 0, TextMessageNotFound: 0 };
  const accounts = new Map([[ACCOUNT_SID, account()]]);
  let closing = false;
  const actors: SmsActorSpawner = {
    get: () => undefined,
    spawn: (input) => {
      spawned.push(input);
      return {} as SmsActor;
    },
  };
  const inbound = new SmsInbound({
    store: {
      insert: opts.insert ?? (async (m) => void inserted.push(m)),
      getAnyAccount: async (sid) => inserted.find((m) => m.sid === sid) ?? null,
    },
    numbers: { findByNumber: async (n) => (n === '+14155550100' ? number() : null) },
    accounts: { get: async (sid) => accounts.get(sid) ?? null },
    applications: { get: async () => null },
    webhooks: { request: async () => Promise.reject(new Error('no markup in this test')) },
    notifier: { notify: async () => null },
    sendEmail: async () => ({}),
    actors,
    send:
      opts.send ??
      (async (...args) => {
        sends.push(args);
        return inserted[0] as SmsMessage;
      }),
    counters,
    closing: () => closing,
    logger: silent,
  });
  return {
    inbound,
    inserted,
    spawned,
    sends,
    counters,
    accounts,
    close: () => {
      closing = true;
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('SmsInbound', () => {
  it('records an MO to an owned number as received (E.164 with +) and starts its actor', async () => {
    const w = world();
    const m = await w.inbound.receiveMo(mo({ segments: 2 }));
    expect(m).toMatchObject({
      accountSid: ACCOUNT_SID,
      from: '+15557654321',
      to: '+14155550100',
      status: 'received',
      direction: 'incoming',
      channel: 'smpp',
      segments: 2,
    });
    expect(w.inserted).toEqual([m]);
    expect(w.spawned.map((i) => i.sid)).toEqual([m?.sid]);
    expect(w.counters).toEqual({ TextMessageInboundToApp: 1, TextMessageNotFound: 0 });
  });

  it('drops an MO to a number without an active owner (counted, not recorded)', async () => {
    const w = world();
    await expect(w.inbound.receiveMo(mo({ to: '19995550100' }))).resolves.toBeNull();
    w.accounts.set(ACCOUNT_SID, account({ status: AccountStatus.Suspended }));
    await expect(w.inbound.receiveMo(mo())).resolves.toBeNull();
    expect(w.inserted).toEqual([]);
    expect(w.counters.TextMessageNotFound).toBe(2);
  });

  it('takeMo retries a store outage twice (200 ms, 400 ms), then refuses for now', async () => {
    vi.useFakeTimers();
    const outage = new Error('db down');
    let attempts = 0;
    const w = world({
      insert: async () => {
        attempts++;
        throw outage;
      },
    });
    const taken = w.inbound.takeMo(mo());
    const settled = expect(taken).rejects.toBe(outage);
    await vi.advanceTimersByTimeAsync(199);
    expect(attempts).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toBe(2);
    await vi.advanceTimersByTimeAsync(400);
    expect(attempts).toBe(3);
    await settled;

    let once = 0;
    const flaky = world({
      insert: async () => {
        if (once++ === 0) throw outage;
      },
    });
    const ok = flaky.inbound.takeMo(mo());
    await vi.advanceTimersByTimeAsync(200);
    await expect(ok).resolves.toBeUndefined();
  });

  it('takeMo refuses text the store can never hold for good, and everything once closing', async () => {
    const w = world({
      insert: async () => {
        throw new StoreInputError('body', 'nul');
      },
    });
    await expect(w.inbound.takeMo(mo())).rejects.toMatchObject({
      commandStatus: CommandStatus.ESME_RX_P_APPN,
    });
    const closing = world();
    closing.close();
    const refused = closing.inbound.takeMo(mo());
    await expect(refused).rejects.toBeInstanceOf(SmppError);
    await expect(refused).rejects.toMatchObject({ commandStatus: CommandStatus.ESME_RX_T_APPN });
    expect(closing.inserted).toEqual([]);
  });

  it('a SIP MESSAGE to a number is an MO: 202 when recorded, 404 when nobody owns it', async () => {
    const w = world();
    await expect(
      w.inbound.receiveSipMessage({ from: 'client:bob', to: '14155550100', body: 'hi' }),
    ).resolves.toBe(202);
    expect(w.inserted[0]).toMatchObject({
      from: 'client:bob',
      to: '+14155550100',
      channel: 'sip',
      segments: 1,
    });
    await expect(w.inbound.receiveSipMessage({ from: 'x', to: '+19999999999', body: 'hi' })).resolves.toBe(
      404,
    );
  });

  it('a SIP MESSAGE to a client login is relayed from an authenticated client of an active account', async () => {
    const w = world();
    const client = { accountSid: ACCOUNT_SID, login: 'bob' };
    await expect(w.inbound.receiveSipMessage({ from: 'x', to: 'alice', body: 'hi' })).resolves.toBe(403);
    await expect(w.inbound.receiveSipMessage({ from: 'x', to: 'alice', body: 'hi', client })).resolves.toBe(
      202,
    );
    expect(w.sends).toEqual([
      [
        { account: account(), from: 'client:bob', to: 'client:alice', body: 'hi', statusCallback: null },
        { trustedFrom: true },
      ],
    ]);
    w.accounts.set(ACCOUNT_SID, account({ status: AccountStatus.Closed }));
    await expect(w.inbound.receiveSipMessage({ from: 'x', to: 'alice', body: 'hi', client })).resolves.toBe(
      403,
    );

    const unknown = world({
      send: async () => Promise.reject(new AppError('SmsInvalidTo', 'not a client')),
    });
    await expect(
      unknown.inbound.receiveSipMessage({ from: 'x', to: 'carol', body: 'hi', client }),
    ).resolves.toBe(404);
    expect(unknown.counters.TextMessageNotFound).toBe(1);
  });

  it('handleInbound runs the markup of a recorded message once; an unknown sid does nothing', async () => {
    const requests: string[] = [];
    const w = world();
    const m = await w.inbound.receiveMo(mo());
    const withHooks = new SmsInbound({
      store: { insert: async () => {}, getAnyAccount: async (sid) => (sid === m?.sid ? m : null) },
      numbers: { findByNumber: async () => number() },
      accounts: { get: async () => account() },
      applications: { get: async () => null },
      webhooks: {
        request: async (req) => {
          requests.push(req.url);
          return Promise.reject(new Error('unreachable'));
        },
      },
      notifier: { notify: async () => null },
      sendEmail: async () => ({}),
      actors: { get: () => undefined, spawn: () => ({}) as SmsActor },
      send: async () => Promise.reject(new Error('no reply expected')),
      counters: { TextMessageInboundToApp: 0, TextMessageNotFound: 0 },
      closing: () => false,
      logger: silent,
    });
    await withHooks.handleInbound('SMnone');
    expect(requests).toEqual([]);
    await withHooks.handleInbound(m?.sid ?? '').catch(() => {});
    expect(requests).toEqual(['http://app.test/sms']);
  });
});
