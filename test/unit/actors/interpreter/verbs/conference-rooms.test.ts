import { describe, expect, it } from 'vitest';
import type { ConferenceEmitted } from '../../../../../src/actors/conference/conference.types.js';
import {
  ConferenceRooms,
  type EnterRequest,
  type ParticipantMedia,
} from '../../../../../src/actors/interpreter/verbs/conference-rooms.js';

/** Whether `p` has settled, and with what. */
const settled = async <T>(p: Promise<T>): Promise<{ value: T } | null> => {
  let out: { value: T } | null = null;
  void p.then((value) => {
    out = { value };
  });
  await new Promise((r) => setImmediate(r));
  return out;
};

/** A participant's media that records what the conference did to it. */
function media(log: string[], callSid: string): ParticipantMedia {
  return {
    leave: () => log.push(`${callSid} leave`),
    setMuted: (m) => log.push(`${callSid} muted=${m}`),
    play: (source, loop) =>
      log.push(`${callSid} play ${source.kind === 'url' ? source.url : source.kind} x${loop}`),
    stopPlay: () => log.push(`${callSid} stop`),
  };
}

const request = (
  callSid: string,
  log: string[],
  o: Partial<{ starts: boolean; ends: boolean; max: number; room: string }> = {},
): EnterRequest => ({
  accountSid: 'AC1',
  friendlyName: o.room ?? 'r',
  apiVersion: '2012-04-24',
  callSid,
  endpointId: callSid,
  muted: false,
  startConferenceOnEnter: o.starts ?? true,
  endConferenceOnExit: o.ends ?? false,
  maxParticipants: o.max ?? 250,
  statusCallback: null,
  media: media(log, callSid),
});

describe('ConferenceRooms', () => {
  it('participants who do not start the conference wait until one who does enters', async () => {
    const rooms = new ConferenceRooms();
    const log: string[] = [];
    const waiter = rooms.enter(request('CA1', log, { starts: false }))!;
    expect(await settled(waiter.started)).toBeNull();
    expect(rooms.get('AC1', waiter.conferenceSid)?.status).toBe('RUNNING_MODERATOR_ABSENT');
    const starter = rooms.enter(request('CA2', log))!;
    expect(starter.conferenceSid).toBe(waiter.conferenceSid);
    expect(await settled(starter.started)).toEqual({ value: true });
    expect(await settled(waiter.started)).toEqual({ value: true });
    expect(rooms.get('AC1', waiter.conferenceSid)?.status).toBe('RUNNING_MODERATOR_PRESENT');
    // Once started, a late non-starter goes straight in.
    expect(await settled(rooms.enter(request('CA3', log, { starts: false }))!.started)).toEqual({
      value: true,
    });
  });

  it('a participant with endConferenceOnExit makes the others leave; waiters of an ended room are dismissed', async () => {
    const rooms = new ConferenceRooms();
    const log: string[] = [];
    const moderator = rooms.enter(request('CA1', log, { ends: true }))!;
    rooms.enter(request('CA2', log));
    rooms.enter(request('CA3', log));
    moderator.exit();
    moderator.exit(); // idempotent
    expect(log).toEqual(['CA2 leave', 'CA3 leave']);
    const live = rooms.get('AC1', moderator.conferenceSid)!;
    expect(live.status).toBe('STOPPING');
    expect(live.context).toMatchObject({
      endReason: 'participant-with-end-conference-on-exit-left',
      callSidEnding: 'CA1',
    });
    // An ordinary participant leaving ends nothing.
    const other = new ConferenceRooms();
    const gone: string[] = [];
    const a = other.enter(request('CA4', gone, { room: 's' }))!;
    other.enter(request('CA5', gone, { room: 's' }));
    a.exit();
    expect(gone).toEqual([]);
  });

  it('refuses a participant beyond maxParticipants (waiters count); a name used again is a new conference', async () => {
    const rooms = new ConferenceRooms();
    const log: string[] = [];
    const a = rooms.enter(request('CA1', log, { starts: false, max: 2 }))!;
    const b = rooms.enter(request('CA2', log, { max: 2 }))!;
    expect(rooms.enter(request('CA3', log, { max: 2 }))).toBeNull();
    a.exit();
    b.exit();
    // Completed and forgotten: the same name makes a new conference that waits again.
    expect(rooms.get('AC1', a.conferenceSid)).toBeNull();
    const c = rooms.enter(request('CA4', log, { starts: false }))!;
    expect(c.conferenceSid).not.toBe(a.conferenceSid);
    expect(await settled(c.started)).toBeNull();
  });

  it('mute, hold, announce and kick reach the participant; a missing participant or another account is refused', async () => {
    const published: ConferenceEmitted[] = [];
    const muted: string[] = [];
    const rooms = new ConferenceRooms({
      publish: (e) => published.push(e),
      muteCall: (callSid, m) => {
        muted.push(`${callSid}=${m}`);
        return true;
      },
    });
    const log: string[] = [];
    const a = rooms.enter(request('CA1', log))!;
    rooms.enter(request('CA2', log));
    const sid = a.conferenceSid;
    const at = 1;
    expect(rooms.command('AC1', sid, { type: 'http.mute', callSid: 'CA1', muted: true, at })).toBe('ok');
    expect(muted).toEqual(['CA1=true']);
    expect(rooms.get('AC1', sid)?.context.participants.CA1?.muted).toBe(true);
    // The call's own mute echoing back changes nothing more.
    rooms.callMuted('CA1', true);
    expect(published.filter((e) => e.type === 'participant.muted')).toHaveLength(1);

    rooms.command('AC1', sid, {
      type: 'http.hold',
      callSid: 'CA2',
      hold: true,
      holdUrl: 'http://x/m.wav',
      at,
    });
    rooms.command('AC1', sid, { type: 'http.hold', callSid: 'CA2', hold: false, holdUrl: null, at });
    rooms.command('AC1', sid, { type: 'http.announce', callSid: null, url: 'http://x/a.wav', at });
    expect(log).toEqual([
      'CA2 muted=true',
      'CA2 play http://x/m.wav x0',
      'CA2 stop',
      'CA2 muted=false',
      'CA1 play http://x/a.wav x1',
      'CA2 play http://x/a.wav x1',
    ]);
    expect(published.filter((e) => e.type === 'participant.held').map((e) => e.participant.hold)).toEqual([
      true,
      false,
    ]);

    expect(rooms.command('AC1', sid, { type: 'http.kick', callSid: 'CA9', at })).toBe('no-participant');
    expect(rooms.command('AC2', sid, { type: 'http.kick', callSid: 'CA1', at })).toBe('no-conference');
    expect(rooms.get('AC2', sid)).toBeNull();
    expect(rooms.command('AC1', sid, { type: 'http.kick', callSid: 'CA1', at })).toBe('ok');
    expect(log.at(-1)).toBe('CA1 leave');
  });

  it('ending the conference sends everyone out and completes once they have left', async () => {
    const published: ConferenceEmitted[] = [];
    const rooms = new ConferenceRooms({ publish: (e) => published.push(e) });
    const log: string[] = [];
    const a = rooms.enter(request('CA1', log))!;
    const b = rooms.enter(request('CA2', log))!;
    const waiter = rooms.enter(request('CA3', log, { room: 'w', starts: false }))!;
    rooms.command('AC1', a.conferenceSid, { type: 'http.end', at: 5 });
    expect(log).toEqual(['CA1 leave', 'CA2 leave']);
    a.exit();
    b.exit();
    expect(rooms.get('AC1', a.conferenceSid)).toBeNull();
    const ended = published.find((e) => e.type === 'conference.ended');
    expect(ended?.conference).toMatchObject({ endReason: 'conference-ended-via-api', callSidEnding: null });
    // A waiting participant of an ended conference leaves without joining.
    rooms.stopAll();
    expect(await settled(waiter.started)).toEqual({ value: false });
    expect(published.map((e) => e.type).filter((t) => t === 'conference.created')).toHaveLength(2);
  });
});

describe('ConferenceRooms: the last participant', () => {
  it('ends the conference as last-participant-left, or as the moderator when it had endConferenceOnExit', () => {
    const published: ConferenceEmitted[] = [];
    const rooms = new ConferenceRooms({ publish: (e) => published.push(e) });
    const log: string[] = [];
    rooms.enter(request('CA1', log, { room: 'a' }))!.exit();
    rooms.enter(request('CA2', log, { room: 'b', ends: true }))!.exit();
    const ends = published.filter((e) => e.type === 'conference.ended').map((e) => e.conference);
    expect(ends.map((c) => [c.endReason, c.callSidEnding])).toEqual([
      ['last-participant-left', 'CA1'],
      ['participant-with-end-conference-on-exit-left', 'CA2'],
    ]);
    // Closing forgets everything and releases anyone still waiting.
    const waiter = rooms.enter(request('CA3', log, { room: 'c', starts: false }))!;
    rooms.close();
    expect(rooms.get('AC1', waiter.conferenceSid)).toBeNull();
  });
});
