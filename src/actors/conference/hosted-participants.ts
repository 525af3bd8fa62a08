/**
 * The owner's side of a cross-node participant: the joining node's offer answered on a host
 * endpoint seated in the room under the call's sid, running the same stay as a local participant.
 * The stay ends when the joining node says the caller went (`exit`), when the call's node is gone
 * (its claim ran out or moved), or as any stay ends (kick, room ended): then the joining node is
 * told the participant left.
 */
import type { ConferenceOwnerStore } from '../../store/conference-owner-store.js';
import {
  enterRoom,
  type RoomJoin,
  type RoomMedia,
  roomKeyOf,
  stayInRoom,
} from '../interpreter/verbs/conference-join.js';
import type { ConferenceRooms } from '../interpreter/verbs/conference-rooms.js';
import type { ConferenceRequest, MediaSteps } from './remote-protocol.js';

export interface HostedParticipantsDeps {
  readonly rooms: ConferenceRooms;
  readonly m: RoomMedia;
  readonly steps: MediaSteps;
  readonly owners: ConferenceOwnerStore;
  /** Where a call runs (its claim). */
  readonly calls: { ownerOf(sid: string): Promise<{ node: string; current: boolean } | null> };
  readonly self: string;
  readonly leaseMs: number;
  /** How often the call's node is checked. */
  readonly watchMs: number;
  /** Tells a node something; never throws. */
  readonly ask: (node: string, request: ConferenceRequest) => Promise<unknown>;
}

interface Hosted {
  readonly controller: AbortController;
  /** The node of the participant's call. */
  readonly from: string;
}

export class HostedParticipants {
  /** Participants from other nodes seated here, by call sid. */
  private readonly hosted = new Map<string, Hosted>();

  constructor(private readonly d: HostedParticipantsDeps) {}

  /** Seats a participant of node `from` here: answers its offer on a host endpoint in the room. */
  async host(from: string, j: RoomJoin, offer: string): Promise<unknown> {
    const room = roomKeyOf(j);
    if ((await this.d.owners.claim(room, this.d.self, this.d.leaseMs)) !== this.d.self)
      return { outcome: 'moved' };
    const hostId = `${j.callSid}:cfh`;
    this.hosted.get(j.callSid)?.controller.abort();
    const controller = new AbortController();
    const answer = await this.d.steps.create(hostId, offer, controller.signal);
    if (answer === null) return { outcome: 'failed' };
    const seat = enterRoom(this.d.m, this.d.rooms, j, hostId, hostId);
    if (!seat) {
      this.d.m.media.release(hostId);
      return { outcome: 'full' };
    }
    const hosted: Hosted = { controller, from };
    this.hosted.set(j.callSid, hosted);
    const watch = setInterval(() => {
      // The call's node is gone (its claim ran out or moved): nobody hears this participant any more.
      this.d.calls.ownerOf(j.callSid).then(
        (o) => {
          if (!o || !o.current || o.node !== from) controller.abort();
        },
        () => {},
      );
    }, this.d.watchMs);
    void stayInRoom(this.d.m, j, seat, hostId, hostId, controller.signal)
      .catch(() => 'gone' as const)
      .then(() => {
        clearInterval(watch);
        if (this.hosted.get(j.callSid) === hosted) this.hosted.delete(j.callSid);
        this.d.m.media.release(hostId);
        if (!controller.signal.aborted)
          void this.d.ask(from, { kind: 'conference.left', callSid: j.callSid });
      });
    return { outcome: 'joined', sdp: answer, conferenceSid: seat.conferenceSid };
  }

  /** The joining node says the caller went. */
  exit(callSid: string): void {
    this.hosted.get(callSid)?.controller.abort();
  }

  /** Lets every hosted participant go (this node stops). */
  releaseAll(): void {
    for (const h of this.hosted.values()) h.controller.abort();
  }
}
