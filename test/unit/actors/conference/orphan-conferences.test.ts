/**
 * Conferences whose owner died, ended by whichever survivors notice: one end (record and
 * `conference-end`), even when another survivor's late notice lands while the first is still
 * completing the record. The store is an in-memory stand-in of the port (the Redis one is tested
 * against Redis in test/integration/store/redis-stores.test.ts).
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { OrphanConferences } from '../../../../src/actors/conference/orphan-conferences.js';
import type { ConferenceEnding, ConferenceOwnerStore } from '../../../../src/store/conference-owner-store.js';

const logger = pino({ level: 'silent' });

/** The port's semantics in memory: the end mark, the owner's note, the live list. */
class MemoryOwners implements ConferenceOwnerStore {
  readonly ended = new Set<string>();
  readonly notes = new Map<string, ConferenceEnding>();
  readonly live = new Map<string, number>();
  /** How many times a node tried to mark an end. */
  marks = 0;
  async claim(_room: string, node: string): Promise<string> {
    return node;
  }
  async ownerOf(): Promise<string | null> {
    return null;
  }
  async release(): Promise<void> {}
  async locate(sid: string, _node: string, _room: string, ttlMs: number): Promise<void> {
    this.live.set(sid, Date.now() + ttlMs);
  }
  async whereIs(): Promise<null> {
    return null;
  }
  async markEnded(sid: string): Promise<boolean> {
    this.marks++;
    if (this.ended.has(sid)) return false;
    this.ended.add(sid);
    return true;
  }
  async noteEnding(ending: ConferenceEnding): Promise<void> {
    this.notes.set(ending.sid, ending);
  }
  async endingOf(sid: string): Promise<ConferenceEnding | null> {
    return this.notes.get(sid) ?? null;
  }
  async expired(now: number, limit: number): Promise<string[]> {
    return [...this.live]
      .filter(([, at]) => at <= now)
      .map(([sid]) => sid)
      .slice(0, limit);
  }
  async forget(sid: string): Promise<void> {
    this.live.delete(sid);
    this.notes.delete(sid);
  }
  async unlist(sid: string): Promise<void> {
    this.live.delete(sid);
  }
}

/** A conference of a dead owner: listed with a run-out location and its owner's note (4 events). */
async function orphaned(owners: MemoryOwners, sid: string): Promise<void> {
  await owners.locate(sid, 'dead-node', 'AC1:room', -1);
  await owners.noteEnding({
    sid,
    accountSid: 'AC1',
    friendlyName: 'room',
    statusCallback: { url: 'http://127.0.0.1:9/cb', method: 'POST', events: ['start', 'end'] },
    sequence: 4,
  });
}

/** A promise held shut until `open()`. */
function gate(): { readonly shut: Promise<void>; readonly open: () => void } {
  let open = () => {};
  const shut = new Promise<void>((r) => {
    open = r;
  });
  return { shut, open };
}

/** A survivor whose record completion waits for `gate` (a slow Postgres on a loaded node). */
function survivor(owners: MemoryOwners, gate: Promise<void>) {
  const records: string[] = [];
  const callbacks: Array<Record<string, string>> = [];
  const node = new OrphanConferences({
    owners,
    logger,
    completeRecord: async (sid) => {
      await gate;
      records.push(sid);
    },
    sendCallback: async (_account, _sid, _url, _method, params) => {
      callbacks.push(params);
    },
  });
  return { node, records, callbacks };
}

describe('OrphanConferences', () => {
  it('a survivor noticing late does not take the note the first one is still reading', async () => {
    const owners = new MemoryOwners();
    await orphaned(owners, 'CF1');
    const pg = gate();
    const slow = survivor(owners, pg.shut);
    const late = survivor(owners, Promise.resolve());

    const first = slow.node.end('CF1');
    // The second survivor's sweep finds it marked: it only drops it from the live list.
    await late.node.sweep(new Set());
    expect(late.records).toEqual([]);
    expect(owners.live.has('CF1')).toBe(false);
    expect(owners.notes.has('CF1')).toBe(true);

    pg.open();
    await first;
    expect(slow.records).toEqual(['CF1']);
    expect(slow.callbacks).toHaveLength(1);
    expect(slow.callbacks[0]).toMatchObject({
      ConferenceSid: 'CF1',
      StatusCallbackEvent: 'conference-end',
      ReasonConferenceEnded: 'node-stopped',
      SequenceNumber: '5',
    });
    expect(late.callbacks).toEqual([]);
    // The ender forgets it once sent.
    expect(owners.notes.has('CF1')).toBe(false);
  });

  it('a sweep still running is not overlapped by the next round on the same node', async () => {
    const owners = new MemoryOwners();
    await orphaned(owners, 'CF2');
    const pg = gate();
    const one = survivor(owners, pg.shut);
    const rounds = [one.node.sweep(new Set()), one.node.sweep(new Set())];
    pg.open();
    await Promise.all(rounds);
    expect(owners.marks).toBe(1);
    expect(one.records).toEqual(['CF2']);
    expect(one.callbacks.map((p) => p.StatusCallbackEvent)).toEqual(['conference-end']);
  });

  it("leaves this node's own conferences to it", async () => {
    const owners = new MemoryOwners();
    await orphaned(owners, 'CF3');
    const one = survivor(owners, Promise.resolve());
    await one.node.sweep(new Set(['CF3']));
    expect(one.records).toEqual([]);
    expect(owners.ended.has('CF3')).toBe(false);
  });
});
