/** The gateway registration machine with fake timers: refresh at 80 %, capped backoff, restore. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import {
  gatewayRegistrationMachine,
  type RegisterInput,
  type RegisterOutcome,
  registrationStateOf,
  retryDelay,
} from '../../../src/sip/gateway-registration.machine.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A registrar that answers each REGISTER with the next scripted status and grants `expires`. */
function start(script: number[], expires = 100) {
  const calls: { at: number; input: RegisterInput }[] = [];
  const machine = gatewayRegistrationMachine.provide({
    actors: {
      register: fromPromise<RegisterOutcome, RegisterInput>(async ({ input }) => {
        calls.push({ at: Date.now(), input });
        const status = script.shift() ?? 200;
        return { status, reason: '', expires: input.expires ? expires : 0, nextCseq: input.cseq + 2 };
      }),
    },
  });
  const actor = createActor(machine, { input: { gatewaySid: 'GW1', ttl: 3600, callId: 'c1' } });
  actor.start();
  return { actor, calls };
}

describe('gateway registration machine', () => {
  it('refreshes at 80 % of the granted expiry with the same Call-ID and a higher CSeq', async () => {
    const t0 = Date.now();
    const { actor, calls } = start([], 100);
    await vi.advanceTimersByTimeAsync(0);
    expect(registrationStateOf(actor.getSnapshot())).toBe('registered');
    await vi.advanceTimersByTimeAsync(79_000);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - t0).toBe(80_000);
    expect(calls[1]!.input).toMatchObject({ callId: 'c1', cseq: 3, expires: 3600 });
  });

  it('backs off 1 s, 2 s, 4 s … capped at 60 s, and resets after a success', async () => {
    expect([1, 2, 3, 4, 7, 20].map(retryDelay)).toEqual([1000, 2000, 4000, 8000, 60000, 60000]);
    const { actor, calls } = start([503, 503, 408, 200]);
    await vi.advanceTimersByTimeAsync(0);
    expect(registrationStateOf(actor.getSnapshot())).toBe('retrying');
    await vi.advanceTimersByTimeAsync(1000 + 2000 + 4000);
    expect(calls.map((c) => c.at - calls[0]!.at)).toEqual([0, 1000, 3000, 7000]);
    expect(registrationStateOf(actor.getSnapshot())).toBe('registered');
    expect(actor.getSnapshot().context).toMatchObject({ failures: 0, lastStatus: 200 });
  });

  it('re-registers at once with new settings on update, and unregisters (Expires 0) on removal', async () => {
    const { actor, calls } = start([]);
    await vi.advanceTimersByTimeAsync(0);
    actor.send({ type: 'gateway.updated', ttl: 120 });
    await vi.advanceTimersByTimeAsync(0);
    expect(calls[1]!.input.expires).toBe(120);
    actor.send({ type: 'gateway.removed' });
    await vi.advanceTimersByTimeAsync(0);
    expect(calls[2]!.input.expires).toBe(0);
    expect(actor.getSnapshot().status).toBe('done');
  });

  it('a restored snapshot re-arms the refresh from the absolute deadline', async () => {
    const { actor, calls } = start([], 100);
    await vi.advanceTimersByTimeAsync(0);
    const persisted = actor.getPersistedSnapshot();
    actor.stop();
    await vi.advanceTimersByTimeAsync(30_000);
    const again = createActor(
      gatewayRegistrationMachine.provide({
        actors: {
          register: fromPromise<RegisterOutcome, RegisterInput>(async ({ input }) => {
            calls.push({ at: Date.now(), input });
            return { status: 200, reason: '', expires: 100, nextCseq: input.cseq + 2 };
          }),
        },
      }),
      { snapshot: persisted, input: { gatewaySid: 'GW1', ttl: 3600, callId: 'c1' } },
    );
    again.start();
    again.send({ type: 'gateway.restored' });
    await vi.advanceTimersByTimeAsync(49_000);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toHaveLength(2);
  });
});
