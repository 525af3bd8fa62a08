/** Sending: SMPP results and failures as data, SIP MESSAGE statuses as spec codes. */
import { describe, expect, it } from 'vitest';
import { createActor, type fromPromise, setup, toPromise } from 'xstate';
import type { ClientDelivery, ClientMessenger } from '../../../../src/actors/sms/client-messenger.js';
import type { SendInput, SendOutput } from '../../../../src/actors/sms/sms.types.js';
import {
  deliverToClientLogic,
  failure,
  type SubmitSms,
  submitSms as submitSmsLogic,
} from '../../../../src/actors/sms/sms-sending.js';
import { type CarrierLink, CommandStatus, type OutboundSms, SmppError } from '../../../../src/smpp/port.js';
import { silent } from './fixtures.js';

const input: SendInput = {
  sid: 'SM1',
  accountSid: 'AC1',
  from: '+14155550100',
  to: '+15551234567',
  body: 'hi',
  destinationNetworkId: null,
};

/** Runs one invoked-actor logic to its result, as the machine would; a submit is a plain call. */
function run(logic: ReturnType<typeof fromPromise<SendOutput, SendInput>> | SubmitSms, i: SendInput = input) {
  if (typeof logic === 'function') return logic(i);
  return toPromise(createActor(logic, { input: i }).start());
}

function link(submit: (m: OutboundSms) => Promise<{ messageIds: string[]; possibleDuplicate: boolean }>) {
  const sent: OutboundSms[] = [];
  const l = {
    bound: true,
    submit: async (m: OutboundSms) => {
      sent.push(m);
      return { ...(await submit(m)), segments: 1, dataCoding: 0 };
    },
  } as Pick<CarrierLink, 'submit' | 'bound'> as CarrierLink;
  return { link: l, sent };
}

describe('submitSms', () => {
  it('submits without "+", with the network id and a durable mark before the write; ids normalised', async () => {
    const marked: string[] = [];
    const l = link(async (m) => {
      await m.beforeSend?.();
      return { messageIds: ['00AB', '00ac'], possibleDuplicate: true };
    });
    const logic = submitSmsLogic({
      link: l.link,
      store: { markSubmitAttempted: async (sid) => void marked.push(sid) },
      logger: silent,
    });
    const out = await run(logic, { ...input, destinationNetworkId: '7' });
    expect(l.sent[0]).toMatchObject({
      from: '14155550100',
      to: '15551234567',
      reference: 'SM1',
      destinationNetworkId: '7',
    });
    expect(marked).toEqual(['SM1']);
    expect(out.possibleDuplicate).toBe(true);
    expect(out.providerIds).toEqual(['ab', 'ac']);
    await run(logic);
    expect(l.sent[1]).not.toHaveProperty('destinationNetworkId');
  });

  it('fails as data: LOCAL_CLOSED requeues, an SMPP status maps to its code, anything else is 30008', async () => {
    const store = { markSubmitAttempted: async () => {} };
    const closing = submitSmsLogic({
      link: link(async () => Promise.reject(new SmppError(CommandStatus.LOCAL_CLOSED))).link,
      store,
      logger: silent,
    });
    await expect(run(closing)).rejects.toMatchObject({ requeue: true });
    const refused = new SmppError(CommandStatus.ESME_RX_P_APPN);
    const rejected = submitSmsLogic({
      link: link(async () => Promise.reject(refused)).link,
      store,
      logger: silent,
    });
    await expect(run(rejected)).rejects.toEqual(failure(false, refused.errorCode));
    const odd = submitSmsLogic({
      link: link(async () => Promise.reject(new Error('?'))).link,
      store,
      logger: silent,
    });
    await expect(run(odd)).rejects.toEqual(failure(false, 30008));
    const none = submitSmsLogic({ link: null, store, logger: silent });
    await expect(run(none)).rejects.toEqual({
      requeue: false,
      errorCode: 30008,
      errorMessage: 'Unknown error',
    });
  });
});

describe('deliverToClient', () => {
  const clientInput = { ...input, to: 'client:alice' };
  const messenger = (status: number): ClientMessenger & { seen: ClientDelivery[] } => {
    const seen: ClientDelivery[] = [];
    return {
      seen,
      deliver: async (d) => {
        seen.push(d);
        return { status, reason: '' };
      },
    };
  };

  it('delivers to the login through the messenger current at send time', async () => {
    let current: ClientMessenger | null = null;
    const logic = deliverToClientLogic(() => current);
    await expect(run(logic, clientInput)).rejects.toEqual(failure(false, 30003));
    const m = messenger(202);
    current = m;
    await expect(run(logic, clientInput)).resolves.toEqual({ providerIds: [], possibleDuplicate: false });
    expect(m.seen).toEqual([
      { messageSid: 'SM1', accountSid: 'AC1', from: '+14155550100', login: 'alice', body: 'hi' },
    ]);
  });

  it('maps a not-found, unavailable, timed-out or flow-failed client to 30003, any other status to 30008', async () => {
    for (const [status, code] of [
      [404, 30003],
      [430, 30003],
      [480, 30003],
      [408, 30003],
      [500, 30008],
      [603, 30008],
    ] as const) {
      await expect(
        run(
          deliverToClientLogic(() => messenger(status)),
          clientInput,
        ),
      ).rejects.toEqual(failure(false, code));
    }
  });

  it('is cancelled with its actor: the messenger gets the abort signal', async () => {
    let signal: AbortSignal | undefined;
    const logic = deliverToClientLogic(() => ({
      deliver: (_d, s) => {
        signal = s;
        return new Promise(() => {});
      },
    }));
    const parent = setup({ actors: { send: logic } }).createMachine({
      initial: 'sending',
      states: {
        sending: { invoke: { src: 'send', input: () => clientInput }, on: { stop: 'done' } },
        done: {},
      },
    });
    const a = createActor(parent).start();
    await new Promise((r) => setTimeout(r, 0));
    a.send({ type: 'stop' });
    expect(signal?.aborted).toBe(true);
  });
});
