/** Planning a REFER (transfer.ts): who is transferred, which ReferUrl runs, and when it is refused. */
import { describe, expect, it } from 'vitest';
import { initialContext } from '../../../../src/actors/call/call.setup.js';
import type { CallContext, CallEvent } from '../../../../src/actors/call/call.types.js';
import { ReferRefusal } from '../../../../src/actors/call/call-effects.js';
import { planRefer, type TransferDeps, transferEnds } from '../../../../src/actors/call/transfer.js';
import type { IncomingNumber } from '../../../../src/store/number-store.js';

const parent: CallContext = {
  ...initialContext({
    sid: 'CA1',
    accountSid: 'AC1',
    direction: 'inbound',
    from: 'alice',
    to: '+15550001111',
    apiVersion: '2012-04-24',
    createdAt: 0,
    phoneNumberSid: 'PN1',
  }),
  peer: 'CA9',
};
const child: CallContext = {
  ...initialContext({
    sid: 'CA9',
    accountSid: 'AC1',
    direction: 'outbound-dial',
    from: 'alice',
    to: 'sip:bob@h',
    apiVersion: '2012-04-24',
    createdAt: 0,
    parentCallSid: 'CA1',
  }),
  peer: 'CA1',
};

function deps(number: Partial<IncomingNumber> | null, calls = [parent, child]): TransferDeps {
  return {
    contextOf: (sid) => calls.find((c) => c.origin.sid === sid) ?? null,
    liveStatus: (sid) => (calls.some((c) => c.origin.sid === sid) ? 'in-progress' : null),
    send: () => true,
    numberOf: async () =>
      number &&
      ({ accountSid: 'AC1', referMethod: 'POST', referApplicationSid: null, ...number } as IncomingNumber),
    applicationOf: async () => ({ rcmlUrl: 'http://app/rcml' }),
  };
}

describe('planRefer', () => {
  it('a REFER on the Dial child transfers the parent to the number ReferUrl (its method)', async () => {
    expect(await planRefer(child, deps({ referUrl: 'http://hooks/refer', referMethod: 'GET' }))).toEqual({
      transferee: 'CA1',
      app: { url: 'http://hooks/refer', method: 'GET', fallbackUrl: null, fallbackMethod: 'POST' },
    });
  });

  it('a REFER from the caller transfers the Dial child; a Refer application wins over the URL (POST)', async () => {
    const plan = await planRefer(
      parent,
      deps({ referUrl: 'http://hooks/refer', referApplicationSid: 'AP1' }),
    );
    expect(plan).toMatchObject({ transferee: 'CA9', app: { url: 'http://app/rcml', method: 'POST' } });
  });

  it('refused with 404: no ReferUrl, no number, or no live peer', async () => {
    await expect(planRefer(child, deps({ referUrl: null }))).rejects.toMatchObject({ status: 404 });
    await expect(planRefer(child, deps(null))).rejects.toBeInstanceOf(ReferRefusal);
    await expect(planRefer(child, deps({ referUrl: 'http://hooks/refer' }, [child]))).rejects.toMatchObject({
      status: 404,
      reason: expect.stringMatching(/not bridged/),
    });
  });
});

describe('transferEnds', () => {
  it('a transferee that ends tells its transferor 487; other calls tell nobody', () => {
    const sent: Array<[string, CallEvent]> = [];
    const observe = transferEnds((sid, e) => sent.push([sid, e]) > 0);
    const ended = (call: CallContext) =>
      ({
        type: 'call.ended',
        call,
        status: 'completed',
        cause: 'remote-hangup',
        sipStatus: 200,
        duration: 1,
        at: 5,
      }) as const;
    observe(ended(parent));
    observe(
      ended({ ...parent, transfer: { referTarget: 'c', transferor: 'b', transferee: 'a', by: 'CA9' } }),
    );
    expect(sent).toEqual([['CA9', { type: 'app.referOutcome', status: 487, at: 5 }]]);
  });
});
