/** Outbound validation: the order of the checks, the channel choice, the brief caches. */
import { describe, expect, it } from 'vitest';
import { BODY_MAX, type SmsValidationDeps, SmsValidator } from '../../../../src/actors/sms/sms-validation.js';
import { ErrorCatalog } from '../../../../src/errors.js';
import { AccountStatus } from '../../../../src/store/account-store.js';
import type { Client } from '../../../../src/store/client-store.js';
import type { IncomingNumber } from '../../../../src/store/number-store.js';
import type { MultiProviderConfig } from '../../../../src/store/profile-store.js';
import { account, number } from './fixtures.js';

function validator(opts: { hasLink?: boolean; numbers?: IncomingNumber[]; networkId?: number } = {}) {
  const lookups = { numbers: 0, multiProvider: 0 };
  const numbers = opts.numbers ?? [number()];
  const deps: SmsValidationDeps = {
    numbers: {
      findByNumber: async (n) => {
        lookups.numbers++;
        return numbers.find((x) => x.phoneNumber === n) ?? null;
      },
    },
    clients: { list: async () => [{ login: 'alice' } as Client] },
    multiProvider: {
      effectiveMultiProvider: async (): Promise<MultiProviderConfig | null> => {
        lookups.multiProvider++;
        return opts.networkId === undefined
          ? null
          : { 'outbound-sms': [{ destination_network_id: opts.networkId }] };
      },
    },
    hasLink: opts.hasLink ?? true,
    numberCacheMs: 60_000,
    extensionCacheMs: 60_000,
  };
  return { v: new SmsValidator(deps), lookups };
}

const msg = { account: account(), from: '+14155550100', to: '+15551234567', body: 'hi' };
const code = (name: keyof typeof ErrorCatalog) => ({ code: ErrorCatalog[name].code });

describe('SmsValidator', () => {
  it('accepts a message to a number over SMPP from an SMS-capable number of the account', async () => {
    const { v } = validator({ networkId: 42 });
    await expect(v.validate(msg, false)).resolves.toEqual({
      channel: 'smpp',
      from: '+14155550100',
      destinationNetworkId: '42',
    });
    await expect(v.validate({ ...msg, to: '12345' }, false)).resolves.toMatchObject({ channel: 'smpp' });
  });

  it('sends to a client of the account as SIP, without a network id, also without an SMSC', async () => {
    const { v, lookups } = validator({ hasLink: false, networkId: 42 });
    await expect(v.validate({ ...msg, to: 'client:alice' }, false)).resolves.toEqual({
      channel: 'sip',
      from: '+14155550100',
      destinationNetworkId: null,
    });
    expect(lookups.multiProvider).toBe(0);
    await expect(v.validate({ ...msg, to: 'client:bob' }, false)).rejects.toMatchObject(code('SmsInvalidTo'));
    await expect(v.validate({ ...msg, to: 'client:' }, false)).rejects.toMatchObject(code('SmsInvalidTo'));
  });

  it('checks in order: account, empty Body, Body length, From form, To, SMSC, From owner', async () => {
    const { v } = validator({ hasLink: false, numbers: [] });
    const suspended = account({ status: AccountStatus.Suspended });
    await expect(v.validate({ ...msg, account: suspended, body: '' }, false)).rejects.toMatchObject(
      code('AccountNotActive'),
    );
    await expect(v.validate({ ...msg, body: '', from: 'bad' }, false)).rejects.toMatchObject(
      code('SmsBodyRequired'),
    );
    await expect(v.validate({ ...msg, body: 'x'.repeat(BODY_MAX) }, false)).rejects.toMatchObject(
      code('SmsNotConfigured'),
    );
    await expect(
      v.validate({ ...msg, body: 'x'.repeat(BODY_MAX + 1), from: 'bad' }, false),
    ).rejects.toMatchObject(code('SmsBodyTooLong'));
    // A malformed From is the first fix, even while no SMSC is configured.
    await expect(v.validate({ ...msg, from: '+1 555', to: 'nope' }, false)).rejects.toMatchObject(
      code('InvalidParameter'),
    );
    await expect(v.validate({ ...msg, to: 'nope' }, false)).rejects.toMatchObject(code('SmsInvalidTo'));
    await expect(v.validate(msg, false)).rejects.toMatchObject(code('SmsNotConfigured'));
    await expect(validator({ numbers: [] }).v.validate(msg, false)).rejects.toMatchObject(
      code('SmsFromNotOwned'),
    );
  });

  it('refuses a From of another account or without SMS; a short code From is never owned', async () => {
    const other = validator({ numbers: [number({ accountSid: 'AC2' })] });
    await expect(other.v.validate(msg, false)).rejects.toMatchObject(code('SmsFromNotOwned'));
    const noSms = validator({ numbers: [number({ smsCapable: false })] });
    await expect(noSms.v.validate(msg, false)).rejects.toMatchObject(code('SmsFromNotOwned'));
    await expect(validator().v.validate({ ...msg, from: '12345' }, false)).rejects.toMatchObject(
      code('SmsFromNotOwned'),
    );
  });

  it('takes a trusted From as it is (a relayed client message)', async () => {
    const { v, lookups } = validator();
    await expect(v.validate({ ...msg, from: 'client:bob', to: 'client:alice' }, true)).resolves.toEqual({
      channel: 'sip',
      from: 'client:bob',
      destinationNetworkId: null,
    });
    expect(lookups.numbers).toBe(0);
  });

  it('caches sender numbers and multi-provider settings', async () => {
    const { v, lookups } = validator();
    await v.validate(msg, false);
    await v.validate(msg, false);
    expect(lookups).toEqual({ numbers: 1, multiProvider: 1 });
  });
});
