/** Shared fixtures of the SMS unit tests: a silent logger, accounts, numbers, the provided machine. */
import { pino } from 'pino';
import { fromPromise } from 'xstate';
import { smsMachine } from '../../../../src/actors/sms/sms.machine.js';
import type { SendInput, SendOutput } from '../../../../src/actors/sms/sms.types.js';
import { type Account, AccountStatus } from '../../../../src/store/account-store.js';
import type { IncomingNumber } from '../../../../src/store/number-store.js';

export const silent = pino({ level: 'silent' });

export const ACCOUNT_SID = 'AC00000000000000000000000000000001';

export function account(fields: Partial<Account> = {}): Account {
  return { sid: ACCOUNT_SID, status: AccountStatus.Active, authToken: 'token', ...fields } as Account;
}

export function number(fields: Partial<IncomingNumber> = {}): IncomingNumber {
  return {
    accountSid: ACCOUNT_SID,
    phoneNumber: '+14155550100',
    smsCapable: true,
    apiVersion: '2012-04-24',
    smsApplicationSid: null,
    smsUrl: 'http://app.test/sms',
    smsMethod: 'POST',
    smsFallbackUrl: null,
    smsFallbackMethod: 'POST',
    ...fields,
  } as IncomingNumber;
}

/** A promise that never settles: a submit or an invoked actor that tests leave pending. */
export const never = () => new Promise<never>(() => {});

/** The SMS machine whose invoked actors never settle unless given (tests drive receipts and statuses). */
export function machineWith(actors: { inbound?: (sid: string) => Promise<void> } = {}) {
  return smsMachine.provide({
    actors: {
      deliverToClient: fromPromise<SendOutput, SendInput>(never),
      handleInbound: fromPromise<void, { sid: string }>(({ input }) => (actors.inbound ?? never)(input.sid)),
    },
  });
}

export function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets pending promise callbacks and microtasks run. */
export const flush = () => new Promise((r) => setImmediate(r));
