/** The SMS actor's machine against the spec's status table, with fake invoked actors. */

import { describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import { smsMachine, statusOf } from '../../../../src/actors/sms/sms.machine.js';
import type {
  SendFailure,
  SendInput,
  SendOutput,
  SmsInput,
  SmsStatusChanged,
} from '../../../../src/actors/sms/sms.types.js';
import type { SmsStatus } from '../../../../src/store/sms-store.js';

const base: SmsInput = {
  sid: 'SM00000000000000000000000000000001',
  accountSid: 'AC00000000000000000000000000000001',
  from: '+14155550100',
  to: '+15551234567',
  body: 'hi',
  channel: 'smpp',
  direction: 'outbound-api',
  status: 'sending',
  destinationNetworkId: null,
};

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function start(input: Partial<SmsInput> = {}) {
  const submit = deferred<SendOutput>();
  const client = deferred<SendOutput>();
  const inbound = deferred<void>();
  const submitted: SendInput[] = [];
  const machine = smsMachine.provide({
    actors: {
      deliverToClient: fromPromise<SendOutput, SendInput>(() => client.promise),
      handleInbound: fromPromise<void, { sid: string }>(() => inbound.promise),
    },
  });
  const actor = createActor(machine, { input: { ...base, ...input } });
  const emitted: SmsStatusChanged[] = [];
  actor.on('sms.status', (e) => emitted.push(e));
  // The submit command, run as the service runs it: its outcome goes back as one event.
  actor.on('sms.submit', (e) => {
    submitted.push(e.input);
    submit.promise.then(
      (output) => actor.send({ type: 'smpp.submitted', output }),
      (error: SendFailure) => actor.send({ type: 'smpp.submitFailed', error }),
    );
  });
  actor.start();
  const status = (): SmsStatus => statusOf(actor.getSnapshot());
  return { actor, submit, client, inbound, submitted, emitted, status };
}

const tick = () => new Promise((r) => setTimeout(r, 0));
const failure = (errorCode: number | null, requeue = false): SendFailure => ({
  requeue,
  errorCode,
  errorMessage: null,
});

describe('sms machine', () => {
  it('sending → sent (ids recorded) → delivered when every segment is DELIVRD', async () => {
    const t = start({ destinationNetworkId: '7' });
    expect(t.status()).toBe('sending');
    expect(t.submitted[0]).toMatchObject({ sid: base.sid, destinationNetworkId: '7' });
    t.submit.resolve({ providerIds: ['a1', 'a2'], possibleDuplicate: true });
    await tick();
    expect(t.status()).toBe('sent');
    expect(t.emitted).toEqual([
      expect.objectContaining({
        to: 'sent',
        from: ['queued', 'sending'],
        providerIds: ['a1', 'a2'],
        possibleDuplicate: true,
      }),
    ]);
    t.actor.send({ type: 'smpp.receipt', messageId: 'a1', outcome: 'delivered', errorCode: null });
    expect(t.status()).toBe('sent');
    t.actor.send({ type: 'smpp.receipt', messageId: 'a2', outcome: 'pending', errorCode: null });
    expect(t.status()).toBe('sent');
    t.actor.send({ type: 'smpp.receipt', messageId: 'zz', outcome: 'delivered', errorCode: null });
    expect(t.status()).toBe('sent');
    t.actor.send({ type: 'smpp.receipt', messageId: 'a2', outcome: 'delivered', errorCode: null });
    expect(t.status()).toBe('delivered');
    expect(t.emitted.at(-1)).toMatchObject({ to: 'delivered', from: ['sent'], errorCode: null });
    // Final: a late or duplicate receipt has no transition and nothing more was emitted.
    expect(
      t.actor
        .getSnapshot()
        .can({ type: 'smpp.receipt', messageId: 'a2', outcome: 'failed', errorCode: 30008 }),
    ).toBe(false);
    expect(t.emitted).toHaveLength(2);
    expect(t.actor.getSnapshot().status).toBe('done');
  });

  it('one undelivered segment → undelivered with its error code; failed beats undelivered', async () => {
    const t = start();
    t.submit.resolve({ providerIds: ['b1'], possibleDuplicate: false });
    await tick();
    t.actor.send({ type: 'smpp.receipt', messageId: 'b1', outcome: 'undelivered', errorCode: 30003 });
    expect(t.status()).toBe('undelivered');
    expect(t.emitted.at(-1)).toMatchObject({ to: 'undelivered', errorCode: 30003 });

    const u = start();
    u.submit.resolve({ providerIds: ['c1', 'c2'], possibleDuplicate: false });
    await tick();
    u.actor.send({ type: 'smpp.receipt', messageId: 'c1', outcome: 'failed', errorCode: 30007 });
    expect(u.status()).toBe('failed');
    expect(u.emitted.at(-1)).toMatchObject({ to: 'failed', from: ['sent'], errorCode: 30007 });
  });

  it('a rejected submit → failed (no delivery event follows); a closing link → queued, recorded', async () => {
    const t = start();
    t.submit.reject(failure(30005));
    await tick();
    expect(t.status()).toBe('failed');
    expect(t.emitted).toEqual([
      expect.objectContaining({ to: 'failed', errorCode: 30005, from: ['queued', 'sending'] }),
    ]);

    const u = start();
    u.submit.reject(failure(null, true));
    await tick();
    expect(u.status()).toBe('queued');
    expect(u.emitted).toEqual([
      expect.objectContaining({ from: ['sending'], to: 'queued', errorCode: null }),
    ]);
  });

  it('queued (no bound SMSC) → link.up → sending, recorded once', async () => {
    const t = start({ status: 'queued' });
    expect(t.status()).toBe('queued');
    expect(t.submitted).toHaveLength(0);
    t.actor.send({ type: 'link.up' });
    expect(t.status()).toBe('sending');
    expect(t.submitted).toHaveLength(1);
    expect(t.emitted).toEqual([expect.objectContaining({ from: ['queued'], to: 'sending' })]);
    t.actor.send({ type: 'link.up' });
    expect(t.submitted).toHaveLength(1);
  });

  it('restored from a `sent` record: takes a late receipt without re-sending', () => {
    const t = start({ status: 'sent', providerIds: ['d1'] });
    expect(t.status()).toBe('sent');
    expect(t.submitted).toHaveLength(0);
    t.actor.send({ type: 'smpp.receipt', messageId: 'd1', outcome: 'delivered', errorCode: null });
    expect(t.status()).toBe('delivered');
    // A multi-part message restored with the outcomes recorded before the restart.
    const u = start({ status: 'sent', providerIds: ['e1', 'e2'], outcomes: { e1: 'delivered' } });
    u.actor.send({ type: 'smpp.receipt', messageId: 'e2', outcome: 'delivered', errorCode: null });
    expect(u.status()).toBe('delivered');
    // Restored with outcomes that already decide it (stopped between a segment's outcome and the
    // message's status): final at once, the change emitted once.
    const v = start({
      status: 'sent',
      providerIds: ['f1', 'f2'],
      outcomes: { f1: 'delivered', f2: 'failed' },
    });
    expect(v.status()).toBe('failed');
    expect(v.emitted.map((e) => [e.from, e.to])).toEqual([[['sent'], 'failed']]);
    const w = start({ status: 'sent', providerIds: ['g1'], outcomes: { g1: 'delivered' } });
    expect(w.status()).toBe('delivered');
    expect(w.emitted).toHaveLength(1);
  });

  it('client recipients go over SIP MESSAGE: 2xx → sent (final, no receipts); otherwise failed', async () => {
    const t = start({ channel: 'sip', to: 'client:alice' });
    expect(t.submitted).toHaveLength(0);
    t.client.resolve({ providerIds: [], possibleDuplicate: false });
    await tick();
    expect(t.status()).toBe('sent');
    expect(t.actor.getSnapshot().status).toBe('done');
    const u = start({ channel: 'sip', to: 'client:bob' });
    u.client.reject(failure(30003));
    await tick();
    expect(u.status()).toBe('failed');
  });

  it('inbound: received, runs the markup handler, stays received', async () => {
    const t = start({ direction: 'incoming', status: 'received' });
    expect(t.status()).toBe('received');
    expect(t.submitted).toHaveLength(0);
    t.inbound.resolve();
    await tick();
    expect(t.status()).toBe('received');
    expect(t.actor.getSnapshot().status).toBe('done');
    expect(t.emitted).toEqual([]);
  });
});
