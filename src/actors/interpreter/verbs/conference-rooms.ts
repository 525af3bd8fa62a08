/**
 * This node's conferences: one conference actor (src/actors/conference) per live room, keyed like
 * the media engine's mixers (`AC…:name`), and the live handles of their participants (their media
 * and the promise their `<Dial>` waits on), keyed by call sid. The `<Dial><Conference>` verb enters
 * and exits through here; the REST layer reads and commands the actors through here. Rooms are
 * forgotten when their conference completes; a name used again makes a new conference (new sid).
 */
import { type Actor, createActor } from 'xstate';
import { newSid, SidPrefix } from '../../../ids.js';
import type { PlaySource } from '../../../media/port.js';
import { CONFERENCE_STATUSES, type ConferenceStatus } from '../../../store/conference-store.js';
import { createConferenceMachine } from '../../conference/conference.machine.js';
import type {
  Arrival,
  ConferenceCallback,
  ConferenceContext,
  ConferenceEmitted,
  ConferenceEvent,
  Participant,
} from '../../conference/conference.types.js';
import type { ConferenceEffects } from '../../conference/conference-effects.js';

/** A participant's own conference attributes (reported by the REST Mute response). */
export interface ParticipantFlags {
  readonly startsConference: boolean;
  readonly endsConference: boolean;
}

/** What the Call resource's Mute response shows of the call's conference. */
export interface ParticipantView extends ParticipantFlags {
  readonly conferenceSid: string;
  /**
   * The room, for a call whose endpoint is not itself in the mixer: it is seated in another node's
   * room over an RTP link (its media engine does not report a room then).
   */
  readonly room?: string;
  readonly hold: boolean;
}

/** What the conference may do to a participant's media (the verb gives them on entering). */
export interface ParticipantMedia {
  /** Leaves the mixer (the media engine's conferenceLeave). */
  leave(): void;
  setMuted(muted: boolean): void;
  play(source: PlaySource, loop: number): void;
  stopPlay(): void;
}

/** What the `<Dial><Conference>` verb says when its call enters a room. */
export interface EnterRequest extends Omit<Arrival, 'statusCallback'> {
  readonly accountSid: string;
  readonly friendlyName: string;
  readonly apiVersion: string;
  readonly maxParticipants: number;
  readonly statusCallback?: ConferenceCallback | null;
  readonly media: ParticipantMedia;
}

/** A participant's place in a conference, from `enter` until `exit`. */
export interface Seat {
  readonly conferenceSid: string;
  /** True once it may join the mixer; false when it leaves without joining (kicked, conference ended). */
  readonly started: Promise<boolean>;
  /** Leaves the conference (idempotent). */
  exit(): void;
}

/** A live conference as the REST layer sees it. */
export interface LiveConference {
  readonly context: ConferenceContext;
  readonly status: ConferenceStatus;
}

/** Outcome of a REST command on a participant or conference. */
export type CommandResult = 'ok' | 'no-conference' | 'no-participant';

/** What the REST layer reads and commands: this node's rooms, or in a cluster every node's. */
export interface LiveConferences {
  get(accountSid: string, sid: string): Promise<LiveConference | null> | LiveConference | null;
  command(accountSid: string, sid: string, event: ConferenceEvent): Promise<CommandResult> | CommandResult;
}

export interface ConferenceRoomsOptions {
  /** Receives every conference's domain events (record writer, status callbacks). */
  readonly publish?: (event: ConferenceEmitted) => void;
  /**
   * Mutes a call through its call actor, so the Call resource shows it too; false when the call
   * is not live here (then the media is muted directly).
   */
  readonly muteCall?: (callSid: string, muted: boolean) => boolean;
}

type ConferenceActor = Actor<ReturnType<typeof createConferenceMachine>>;

interface Handle {
  readonly conferenceSid: string;
  readonly media: ParticipantMedia;
  readonly flags: ParticipantFlags;
  readonly wake: (admitted: boolean) => void;
}

/** The REST status of a conference snapshot: from its state's tag. */
export function statusOf(actor: ConferenceActor): ConferenceStatus {
  const snap = actor.getSnapshot();
  return CONFERENCE_STATUSES.find((s) => snap.hasTag(s)) ?? 'COMPLETED';
}

const HOLD_SILENCE: PlaySource = { kind: 'silence', ms: 1000 };

export class ConferenceRooms {
  private readonly byRoom = new Map<string, ConferenceActor>();
  private readonly bySid = new Map<string, ConferenceActor>();
  private readonly handles = new Map<string, Handle>();
  private readonly byEndpoint = new Map<string, string>();
  private readonly machine: ReturnType<typeof createConferenceMachine>;

  constructor(private readonly options: ConferenceRoomsOptions = {}) {
    this.machine = createConferenceMachine(this.effects());
  }

  /** The attributes `endpointId` entered its conference with and its place there, or null when in none. */
  flagsOf(endpointId: string): ParticipantView | null {
    const callSid = this.byEndpoint.get(endpointId);
    const h = callSid ? this.handles.get(callSid) : undefined;
    if (!callSid || !h) return null;
    const p = this.bySid.get(h.conferenceSid)?.getSnapshot().context.participants[callSid];
    return { ...h.flags, conferenceSid: h.conferenceSid, hold: p?.hold ?? false };
  }

  /** The conference `callSid` is in, if any (its sid). */
  conferenceOfCall(callSid: string): string | null {
    return this.handles.get(callSid)?.conferenceSid ?? null;
  }

  /** The call's participant in its conference (the Call resource's Mute response shows it). */
  participantOf(
    callSid: string,
  ): { readonly conferenceSid: string; readonly participant: Participant } | null {
    const conferenceSid = this.conferenceOfCall(callSid);
    const participant = conferenceSid
      ? this.bySid.get(conferenceSid)?.getSnapshot().context.participants[callSid]
      : null;
    return conferenceSid && participant ? { conferenceSid, participant } : null;
  }

  /**
   * Enters a call into its account's room `friendlyName` (a new conference when none runs), or
   * returns null when the room already holds `maxParticipants` (waiting participants included).
   */
  enter(r: EnterRequest): Seat | null {
    const roomKey = `${r.accountSid}:${r.friendlyName}`;
    let actor = this.byRoom.get(roomKey);
    if (actor && statusOf(actor) === 'STOPPING') actor = undefined;
    if (actor && Object.keys(actor.getSnapshot().context.participants).length >= r.maxParticipants)
      return null;
    if (!actor) actor = this.create(roomKey, r);
    const conferenceSid = actor.getSnapshot().context.sid;
    this.handles.get(r.callSid)?.wake(false);
    let wake: (admitted: boolean) => void = () => {};
    const started = new Promise<boolean>((resolve) => {
      wake = resolve;
    });
    const handle: Handle = {
      conferenceSid,
      media: r.media,
      flags: { startsConference: r.startConferenceOnEnter, endsConference: r.endConferenceOnExit },
      wake,
    };
    this.handles.set(r.callSid, handle);
    this.byEndpoint.set(r.endpointId, r.callSid);
    const target = actor;
    target.send({
      type: 'participant.enter',
      arrival: {
        callSid: r.callSid,
        endpointId: r.endpointId,
        muted: r.muted,
        startConferenceOnEnter: r.startConferenceOnEnter,
        endConferenceOnExit: r.endConferenceOnExit,
        statusCallback: r.statusCallback ?? null,
      },
      at: Date.now(),
    });
    let gone = false;
    return {
      conferenceSid,
      started,
      exit: () => {
        if (gone) return;
        gone = true;
        if (this.handles.get(r.callSid) === handle) {
          this.handles.delete(r.callSid);
          this.byEndpoint.delete(r.endpointId);
        }
        handle.wake(false);
        target.send({ type: 'participant.exit', callSid: r.callSid, at: Date.now() });
      },
    };
  }

  /** A live conference of `accountSid` (others' are not found). */
  get(accountSid: string, sid: string): LiveConference | null {
    const actor = this.bySid.get(sid);
    if (!actor) return null;
    const context = actor.getSnapshot().context;
    if (context.accountSid !== accountSid) return null;
    return { context, status: statusOf(actor) };
  }

  /** Sends a REST command to a live conference of `accountSid`; participant commands check the call is in it. */
  command(accountSid: string, sid: string, event: ConferenceEvent): CommandResult {
    const live = this.get(accountSid, sid);
    const actor = this.bySid.get(sid);
    if (!live || !actor) return 'no-conference';
    if ('callSid' in event && event.callSid !== null && !(event.callSid in live.context.participants))
      return 'no-participant';
    actor.send(event);
    return 'ok';
  }

  /** Reflects a call's own mute (REST Mute on the call) into its conference. */
  callMuted(callSid: string, muted: boolean): void {
    const sid = this.conferenceOfCall(callSid);
    if (sid) this.bySid.get(sid)?.send({ type: 'call.muted', callSid, muted, at: Date.now() });
  }

  /**
   * Ends every conference (the node is stopping): participants are sent out. Resolves once every
   * conference has completed (its participants left, or its stop timeout passed), so its end is
   * recorded and announced before the node goes.
   */
  stopAll(): Promise<void> {
    const actors = [...this.bySid.values()];
    const completed = actors.map(
      (actor) =>
        new Promise<void>((resolve) => {
          if (actor.getSnapshot().status !== 'active') resolve();
          else actor.subscribe({ complete: resolve, error: () => resolve() });
        }),
    );
    for (const actor of actors) actor.send({ type: 'node.stop', at: Date.now() });
    return Promise.all(completed).then(() => undefined);
  }

  /** Stops the actors still running after `stopAll` (their timers too) and forgets everything. */
  close(): void {
    for (const actor of this.bySid.values()) actor.stop();
    this.bySid.clear();
    this.byRoom.clear();
    for (const h of this.handles.values()) h.wake(false);
    this.handles.clear();
    this.byEndpoint.clear();
  }

  private create(roomKey: string, r: EnterRequest): ConferenceActor {
    const sid = newSid(SidPrefix.Conference);
    const actor = createActor(this.machine, {
      input: {
        sid,
        accountSid: r.accountSid,
        friendlyName: r.friendlyName,
        apiVersion: r.apiVersion,
        createdAt: Date.now(),
      },
    });
    const publish = this.options.publish;
    if (publish) actor.on('*', (e) => publish(e));
    actor.subscribe({
      complete: () => {
        this.bySid.delete(sid);
        if (this.byRoom.get(roomKey) === actor) this.byRoom.delete(roomKey);
      },
    });
    this.byRoom.set(roomKey, actor);
    this.bySid.set(sid, actor);
    actor.start();
    return actor;
  }

  private effects(): ConferenceEffects {
    const media = (callSid: string) => this.handles.get(callSid)?.media;
    const setMuted = (callSid: string, muted: boolean) => {
      if (!this.options.muteCall?.(callSid, muted)) media(callSid)?.setMuted(muted);
    };
    return {
      admit: (conferenceSid, callSid) => {
        const h = this.handles.get(callSid);
        if (h?.conferenceSid === conferenceSid) h.wake(true);
      },
      dismiss: (conferenceSid, callSid) => {
        const h = this.handles.get(callSid);
        if (h?.conferenceSid === conferenceSid) h.wake(false);
      },
      leave: (callSid) => media(callSid)?.leave(),
      setMuted,
      hold: (callSid, holdUrl) => {
        media(callSid)?.setMuted(true);
        media(callSid)?.play(holdUrl === null ? HOLD_SILENCE : { kind: 'url', url: holdUrl }, 0);
      },
      unhold: (callSid, muted) => {
        media(callSid)?.stopPlay();
        media(callSid)?.setMuted(muted);
      },
      announce: (callSids, url) => {
        for (const s of callSids) media(s)?.play({ kind: 'url', url }, 1);
      },
    };
  }
}
