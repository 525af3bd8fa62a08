/**
 * A participant's stay in a room of this node, from entering to leaving: waits outside the mixer
 * (hearing waitUrl) until the conference starts, joins the media room, and stays until it leaves
 * (kicked, conference ended) or its endpoint goes. The `<Dial><Conference>` verb runs it on its
 * call's endpoint; the room's owner runs it on the inter-node media endpoint of a participant whose
 * call lives on another node (remote-conferences.ts), so both meet the same conference actor.
 */
import type { MediaPort } from '../../../media/port.js';
import type { ConferenceCallback } from '../../conference/conference.types.js';
import type { MediaEvents } from '../services.js';
import type { ConferenceRooms, Seat } from './conference-rooms.js';
import { aborted, awaitMedia } from './support.js';

/** What a call brings to a room (its `<Conference>` attributes, resolved): plain JSON, sent between nodes. */
export interface RoomJoin {
  readonly accountSid: string;
  readonly friendlyName: string;
  readonly apiVersion: string;
  readonly callSid: string;
  readonly muted: boolean;
  readonly startConferenceOnEnter: boolean;
  readonly endConferenceOnExit: boolean;
  readonly maxParticipants: number;
  readonly beep: boolean;
  readonly waitUrl: string | null;
  readonly statusCallback: ConferenceCallback | null;
}

/** How a stay ended: `completed` (left the room, `<Dial>` continues), `gone` (endpoint lost). */
export type StayOutcome = 'completed' | 'gone';

export interface RoomMedia {
  readonly media: MediaPort;
  readonly mediaEvents: MediaEvents;
}

/** The room's media name (`AC…:name`), the key of its claim across nodes too. */
export const roomKeyOf = (j: Pick<RoomJoin, 'accountSid' | 'friendlyName'>) =>
  `${j.accountSid}:${j.friendlyName}`;

/** Enters the room with `endpointId` as the participant's media; null when the room is full. */
export function enterRoom(
  m: RoomMedia,
  rooms: ConferenceRooms,
  j: RoomJoin,
  endpointId: string,
  opId: string,
): Seat | null {
  let plays = 0;
  return rooms.enter({
    accountSid: j.accountSid,
    friendlyName: j.friendlyName,
    apiVersion: j.apiVersion,
    callSid: j.callSid,
    endpointId,
    muted: j.muted,
    startConferenceOnEnter: j.startConferenceOnEnter,
    endConferenceOnExit: j.endConferenceOnExit,
    maxParticipants: j.maxParticipants,
    statusCallback: j.statusCallback,
    media: {
      leave: () => m.media.conferenceLeave(endpointId),
      setMuted: (muted) => m.media.setMuted(endpointId, muted),
      play: (source, loop) => m.media.play(endpointId, `${opId}:conf:${plays++}`, source, { loop }),
      stopPlay: () => m.media.stop(endpointId),
    },
  });
}

/**
 * Until the conference has started (`startConferenceOnEnter`): waits outside the mixer, hearing
 * `waitUrl` looped (else silence). `started` when it may join; `dismissed` when it leaves without
 * joining (kicked, the conference ended); `gone` when the endpoint went away first.
 */
async function waitForStart(
  m: RoomMedia,
  endpointId: string,
  opId: string,
  signal: AbortSignal,
  seat: Seat,
  waitUrl: string | null,
): Promise<'started' | 'dismissed' | 'gone'> {
  if (waitUrl !== null) m.media.play(endpointId, `${opId}:wait`, { kind: 'url', url: waitUrl }, { loop: 0 });
  try {
    return await new Promise<'started' | 'dismissed' | 'gone'>((resolve, reject) => {
      const off = m.mediaEvents.on(endpointId, (e) => {
        if (e.type === 'media.endpointLost' || e.type === 'media.released') done('gone');
      });
      const onAbort = () => {
        off();
        reject(aborted(signal));
      };
      const done = (how: 'started' | 'dismissed' | 'gone') => {
        off();
        signal.removeEventListener('abort', onAbort);
        resolve(how);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      void seat.started.then((started) => done(started ? 'started' : 'dismissed'));
    });
  } finally {
    if (waitUrl !== null) m.media.stop(endpointId);
  }
}

/** Stays in the room from `seat` until it leaves; the seat is exited whatever ends the stay. */
export async function stayInRoom(
  m: RoomMedia,
  j: RoomJoin,
  seat: Seat,
  endpointId: string,
  opId: string,
  signal: AbortSignal,
): Promise<StayOutcome> {
  const onAbort = () => m.media.conferenceLeave(endpointId);
  try {
    const how = await waitForStart(m, endpointId, opId, signal, seat, j.waitUrl);
    if (how === 'gone') return 'gone';
    if (how === 'started') {
      signal.addEventListener('abort', onAbort, { once: true });
      const left = await awaitMedia(
        m,
        endpointId,
        signal,
        () =>
          m.media.conferenceJoin(endpointId, {
            room: roomKeyOf(j),
            muted: j.muted,
            beep: j.beep,
            ...(j.waitUrl === null ? {} : { waitMusic: { kind: 'url', url: j.waitUrl } }),
          }),
        (e) => (e.type === 'media.conferenceLeft' ? e : null),
      );
      if (left === null) return 'gone';
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    seat.exit();
  }
  return 'completed';
}
