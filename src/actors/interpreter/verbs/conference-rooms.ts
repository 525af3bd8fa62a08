/**
 * Who is in which `<Conference>` on this node, for the attributes that involve several participants
 * (the media engine only mixes): `startConferenceOnEnter` (participants who do not start it wait,
 * outside the mixer, until one who does arrives), `endConferenceOnEnter` (when such a participant
 * leaves, everybody leaves) and `maxParticipants`. Rooms are keyed like the engine's (`AC…:name`)
 * and forgotten when empty. Plain bookkeeping: callers do the media operations.
 */

/** A participant's own conference attributes (reported by the REST Mute response). */
export interface ParticipantFlags {
  readonly startsConference: boolean;
  readonly endsConference: boolean;
}

interface Member extends ParticipantFlags {
  /** Makes this participant leave (the media engine's conferenceLeave). */
  readonly leave: () => void;
}

interface Room {
  started: boolean;
  readonly members: Map<string, Member>;
  /** Participants waiting for the start. */
  readonly waiting: Map<string, () => void>;
}

/** A participant's place in a room, from `enter` until `exit`. */
export interface Seat {
  /** Resolves once the conference has started (at once when it had, or when this one starts it). */
  readonly started: Promise<void>;
  /** Leaves the room; a participant with endConferenceOnEnter ends the conference for the others. */
  exit(): void;
}

export class ConferenceRooms {
  private readonly rooms = new Map<string, Room>();
  /** Participants (members and waiters) by endpoint. */
  private readonly participants = new Map<string, ParticipantFlags>();

  /** The attributes `endpointId` entered its room with, or null when it is in none. */
  flagsOf(endpointId: string): ParticipantFlags | null {
    return this.participants.get(endpointId) ?? null;
  }

  /**
   * Enters `endpointId` into `room`, or returns null when the room already holds `maxParticipants`
   * (waiting participants included).
   */
  enter(
    room: string,
    endpointId: string,
    opts: {
      readonly startsConference: boolean;
      readonly endsConference: boolean;
      readonly maxParticipants: number;
      readonly leave: () => void;
    },
  ): Seat | null {
    let r = this.rooms.get(room);
    if (!r) {
      r = { started: false, members: new Map(), waiting: new Map() };
      this.rooms.set(room, r);
    }
    if (r.members.size + r.waiting.size >= opts.maxParticipants) return null;
    const roomState = r;
    const member: Member = {
      startsConference: opts.startsConference,
      endsConference: opts.endsConference,
      leave: opts.leave,
    };
    this.participants.set(endpointId, member);
    let started: Promise<void>;
    if (roomState.started || opts.startsConference) {
      roomState.started = true;
      roomState.members.set(endpointId, member);
      for (const [id, wake] of roomState.waiting) {
        roomState.waiting.delete(id);
        wake();
      }
      started = Promise.resolve();
    } else {
      started = new Promise<void>((resolve) => {
        roomState.waiting.set(endpointId, () => {
          roomState.members.set(endpointId, member);
          resolve();
        });
      });
    }
    let gone = false;
    return {
      started,
      exit: () => {
        if (gone) return;
        gone = true;
        if (this.participants.get(endpointId) === member) this.participants.delete(endpointId);
        roomState.waiting.delete(endpointId);
        const wasMember = roomState.members.delete(endpointId);
        if (wasMember && member.endsConference) {
          for (const other of roomState.members.values()) other.leave();
        }
        if (roomState.members.size === 0 && roomState.waiting.size === 0) this.rooms.delete(room);
      },
    };
  }
}
