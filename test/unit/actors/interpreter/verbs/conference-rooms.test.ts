import { describe, expect, it } from 'vitest';
import { ConferenceRooms } from '../../../../../src/actors/interpreter/verbs/conference-rooms.js';

const settled = async (p: Promise<void>) => {
  let done = false;
  void p.then(() => {
    done = true;
  });
  await new Promise((r) => setImmediate(r));
  return done;
};

const opts = (o: Partial<{ starts: boolean; ends: boolean; max: number; leave: () => void }> = {}) => ({
  startsConference: o.starts ?? true,
  endsConference: o.ends ?? false,
  maxParticipants: o.max ?? 250,
  leave: o.leave ?? (() => {}),
});

describe('ConferenceRooms', () => {
  it('participants who do not start the conference wait until one who does enters', async () => {
    const rooms = new ConferenceRooms();
    const waiter = rooms.enter('AC1:r', 'CA1', opts({ starts: false }))!;
    expect(await settled(waiter.started)).toBe(false);
    const starter = rooms.enter('AC1:r', 'CA2', opts())!;
    expect(await settled(starter.started)).toBe(true);
    expect(await settled(waiter.started)).toBe(true);
    // Once started, a late non-starter goes straight in.
    expect(await settled(rooms.enter('AC1:r', 'CA3', opts({ starts: false }))!.started)).toBe(true);
  });

  it('a participant with endConferenceOnEnter makes the others leave when it exits; waiters stay', async () => {
    const rooms = new ConferenceRooms();
    const left: string[] = [];
    const moderator = rooms.enter('AC1:r', 'CA1', opts({ ends: true, leave: () => left.push('CA1') }))!;
    rooms.enter('AC1:r', 'CA2', opts({ leave: () => left.push('CA2') }));
    rooms.enter('AC1:r', 'CA3', opts({ leave: () => left.push('CA3') }));
    moderator.exit();
    moderator.exit(); // idempotent
    expect(left).toEqual(['CA2', 'CA3']);
    // An ordinary participant leaving ends nothing.
    const other = new ConferenceRooms();
    const gone: string[] = [];
    const a = other.enter('AC1:s', 'CA4', opts({ leave: () => gone.push('CA4') }))!;
    other.enter('AC1:s', 'CA5', opts({ leave: () => gone.push('CA5') }));
    a.exit();
    expect(gone).toEqual([]);
  });

  it('refuses a participant beyond maxParticipants (waiters count) and forgets empty rooms', async () => {
    const rooms = new ConferenceRooms();
    const a = rooms.enter('AC1:r', 'CA1', opts({ starts: false, max: 2 }))!;
    const b = rooms.enter('AC1:r', 'CA2', opts({ max: 2 }))!;
    expect(rooms.enter('AC1:r', 'CA3', opts({ max: 2 }))).toBeNull();
    a.exit();
    b.exit();
    // Empty: forgotten, so a new non-starter waits again.
    const c = rooms.enter('AC1:r', 'CA4', opts({ starts: false }))!;
    expect(await settled(c.started)).toBe(false);
  });
});
