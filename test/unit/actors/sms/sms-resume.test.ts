/** Resume of pending messages: at start, in the sweep, once per message, duplicates flagged. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SmsInput } from '../../../../src/actors/sms/sms.types.js';
import type { SmsActor, SmsActorSpawner } from '../../../../src/actors/sms/sms-actors.js';
import { SmsResume, type SmsResumeDeps } from '../../../../src/actors/sms/sms-resume.js';
import { SmsDirection, type SmsMessage, SmsStatus } from '../../../../src/store/sms-store.js';
import { receivedSms } from '../../../support/records.js';
import { silent } from './fixtures.js';

const pending = (fields: Partial<SmsMessage> = {}) =>
  receivedSms('AC1', { status: SmsStatus.Sending, direction: SmsDirection.OutboundApi, ...fields });

function world(opts: { hasLink?: boolean; rows?: SmsMessage[][]; foreignLeaseEnd?: Date | null } = {}) {
  const calls: string[] = [];
  const spawned: SmsInput[] = [];
  const live = new Set<string>();
  const batches = [...(opts.rows ?? [])];
  let closing = false;
  const actors: SmsActorSpawner = {
    get: (sid) => (live.has(sid) ? ({} as SmsActor) : undefined),
    spawn: (input) => {
      spawned.push(input);
      live.add(input.sid);
      return {} as SmsActor;
    },
  };
  const deps: SmsResumeDeps = {
    store: {
      releaseClaims: async (node) => void calls.push(`release ${node}`),
      renewClaims: async (node, ms) => void calls.push(`renew ${node} ${ms}`),
      claimPending: async (node, ms, limit) => {
        calls.push(`claim ${node} ${ms} ${limit}`);
        return batches.shift() ?? [];
      },
      nextForeignLeaseEnd: async () => opts.foreignLeaseEnd ?? null,
    },
    actors,
    node: 'n1',
    hasLink: opts.hasLink ?? true,
    closing: () => closing,
    leaseMs: 4_000,
    intervalMs: 1_000,
    logger: silent,
  };
  const resume = new SmsResume(deps);
  return {
    resume,
    calls,
    spawned,
    live,
    close: () => {
      closing = true;
    },
  };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('SmsResume', () => {
  it('at start takes back its own leases and resumes what is pending; a possible duplicate is flagged', async () => {
    const sent = pending({ submitAttempted: true });
    const fresh = pending({ status: SmsStatus.Queued });
    const w = world({ rows: [[sent, fresh]] });
    await w.resume.start();
    expect(w.calls).toEqual(['release n1', 'renew n1 4000', 'claim n1 4000 1000']);
    expect(w.spawned.map((i) => [i.sid, i.status])).toEqual([
      [sent.sid, SmsStatus.Sending],
      [fresh.sid, SmsStatus.Queued],
    ]);
    expect(w.resume.isPossibleDuplicate(sent.sid)).toBe(true);
    expect(w.resume.isPossibleDuplicate(fresh.sid)).toBe(false);
    w.resume.forget(sent.sid);
    expect(w.resume.isPossibleDuplicate(sent.sid)).toBe(false);
    w.resume.stop();
  });

  it('sweeps every interval, renewing leases; a message whose actor is live is left alone', async () => {
    const m = pending();
    const w = world({ rows: [[], [m], [m]] });
    await w.resume.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(w.spawned.map((i) => i.sid)).toEqual([m.sid]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(w.spawned).toHaveLength(1);
    expect(w.calls.filter((c) => c.startsWith('renew'))).toHaveLength(3);
    w.resume.stop();
  });

  it("wakes just after another node's lease ends rather than an interval later", async () => {
    const w = world({ foreignLeaseEnd: new Date(Date.now() + 300) });
    await w.resume.start();
    await vi.advanceTimersByTimeAsync(319);
    expect(w.calls.filter((c) => c.startsWith('claim'))).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(w.calls.filter((c) => c.startsWith('claim'))).toHaveLength(2);
    w.resume.stop();
  });

  it('resumes nothing without a carrier link and nothing once closing', async () => {
    const none = world({ hasLink: false, rows: [[pending()]] });
    await none.resume.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(none.calls).toEqual(['release n1']);
    none.resume.stop();

    const w = world();
    await w.resume.start();
    w.close();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(w.calls.filter((c) => c.startsWith('claim'))).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});
