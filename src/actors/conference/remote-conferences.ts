/**
 * Conferences across nodes (docs/cluster.md, "Conferences across nodes"). A room has one owner
 * node, claimed per account and friendly name under a lease the owner renews while the room lives;
 * its conference actor and media mixer run there only, so the Conference and Participant records,
 * the callbacks and the REST commands are those of one node.
 *
 * A call on another node joins by an RTP link between the two media engines, negotiated over node
 * RPC (docs/decisions.md, "Conferences across nodes: an RTP link, set up over node RPC"):
 * - the joining node makes an offer on a relay endpoint and sends it with the call's `<Conference>`
 *   attributes (`conference.join`);
 * - the owner answers it on a host endpoint and seats that endpoint in the room under the call's
 *   sid, running the same stay as a local participant (wait music, beeps, mute, hold, kick);
 * - the joining node bridges its caller's endpoint to the relay until the owner says the
 *   participant left (`conference.left`: kicked, room ended), the caller goes (`conference.exit`),
 *   or the owner's claim runs out (the owner died: the room ends).
 * A conference whose owner died is ended by one survivor, once (its end mark): the record is
 * completed (`node-stopped`) and its `conference-end` callback sent, numbered after the owner's
 * last event (the owner notes it in Redis at each event). The survivor is the first node to notice:
 * one with a participant in the room, or any node's sweep of the conferences whose location ran out.
 * REST reads and commands on a conference this node does not run go to its owner
 * (`conference.get`, `conference.command`).
 */
import type { Logger } from '../../logger.js';
import type { ConferenceOwnerStore } from '../../store/conference-owner-store.js';
import type { NodeRpc } from '../../store/node-rpc.js';
import type { MediaEvents } from '../interpreter/services.js';
import {
  enterRoom,
  type RoomJoin,
  type RoomMedia,
  roomKeyOf,
  type StayOutcome,
  stayInRoom,
} from '../interpreter/verbs/conference-join.js';
import type {
  CommandResult,
  ConferenceRooms,
  LiveConference,
  ParticipantView,
} from '../interpreter/verbs/conference-rooms.js';
import { timerSleep } from '../interpreter/verbs/support.js';
import type { ConferenceEmitted, ConferenceEvent } from './conference.types.js';
import type { SendConferenceCallback } from './conference-observers.js';
import { HostedParticipants } from './hosted-participants.js';
import { OrphanConferences } from './orphan-conferences.js';
import { type ConferenceRequest, isConferenceRequest, MediaSteps } from './remote-protocol.js';

/** How often a node checks that the other side of a cross-node participant is still there. */
export const REMOTE_WATCH_MS = 1000;

/** How many times a join follows a room that moved (its owner changed meanwhile). */
const JOIN_ATTEMPTS = 3;

export interface RemoteConferencesDeps {
  readonly rooms: ConferenceRooms;
  readonly media: RoomMedia['media'];
  readonly mediaEvents: MediaEvents;
  readonly owners: ConferenceOwnerStore;
  /** Where a call runs (its claim): the owner drops a participant whose node is gone. */
  readonly calls: { ownerOf(sid: string): Promise<{ node: string; current: boolean } | null> };
  readonly rpc: NodeRpc;
  readonly self: string;
  /** The room claim's lease; renewed every third of it. */
  readonly leaseMs: number;
  /** How long a request to another node waits for its answer. */
  readonly timeoutMs: number;
  /** Completes the record of a conference whose owner died (called at most once per conference). */
  readonly completeRecord: (sid: string, at: Date) => Promise<void>;
  /** Sends the `conference-end` callback of a conference whose owner died. */
  readonly sendCallback: SendConferenceCallback;
  readonly logger: Logger;
}

/** A call of this node seated in another node's room. */
interface Away {
  /** The owner says the participant left. */
  readonly left: () => void;
  readonly owner: string;
  readonly join: RoomJoin;
  conferenceSid: string;
}

export class RemoteConferences {
  /** Rooms this node owns: room key → the sid of its live conference. */
  private readonly owned = new Map<string, string>();
  /** Participants from other nodes seated here. */
  private readonly hosted: HostedParticipants;
  private readonly orphans: OrphanConferences;
  /** This node's calls seated in other nodes' rooms: call sid → "the owner says it left". */
  private readonly away = new Map<string, Away>();
  /** The sequence number of each owned conference's last event (as its status callbacks count). */
  private readonly sequences = new Map<string, number>();
  private renewal: NodeJS.Timeout | null = null;
  private sweep: NodeJS.Timeout | null = null;
  /** Ends of owned conferences still being marked in Redis (close waits for them). */
  private readonly ending = new Set<Promise<void>>();
  private readonly m: RoomMedia;
  private readonly steps: MediaSteps;

  constructor(private readonly d: RemoteConferencesDeps) {
    this.m = { media: d.media, mediaEvents: d.mediaEvents };
    this.steps = new MediaSteps(this.m);
    this.orphans = new OrphanConferences(d);
    this.hosted = new HostedParticipants({
      ...d,
      m: this.m,
      steps: this.steps,
      watchMs: REMOTE_WATCH_MS,
      ask: (node, request) => this.ask(node, request),
    });
  }

  /** Serves the other nodes' requests, and ends the conferences of nodes that died. */
  serve(): Promise<void> {
    this.sweep ??= setInterval(
      () => void this.orphans.sweep(new Set(this.owned.values())),
      Math.max(REMOTE_WATCH_MS, Math.floor(this.d.leaseMs / 3)),
    );
    this.sweep.unref();
    return this.d.rpc.serve(async (request) => {
      if (!isConferenceRequest(request)) throw new Error('unknown request');
      return this.answer(request);
    });
  }

  /** Follows this node's conferences (their domain events): claims renewed while they live. */
  observe = (e: ConferenceEmitted): void => {
    const room = e.conference.room;
    const c = e.conference;
    if (e.type !== 'conference.ended') {
      const sequence = (this.sequences.get(c.sid) ?? 0) + 1;
      this.sequences.set(c.sid, sequence);
      void this.d.owners
        .noteEnding({
          sid: c.sid,
          accountSid: c.accountSid,
          friendlyName: c.friendlyName,
          statusCallback: c.statusCallback,
          sequence,
        })
        .catch((err) => this.d.logger.warn({ err, conferenceSid: c.sid }, 'conference ending not noted'));
    }
    if (e.type === 'conference.created') {
      this.owned.set(room, e.conference.sid);
      this.renew(room, e.conference.sid);
      this.renewal ??= setInterval(
        () => {
          for (const [r, sid] of this.owned) this.renew(r, sid);
        },
        Math.max(200, Math.floor(this.d.leaseMs / 3)),
      );
    } else if (e.type === 'conference.ended') {
      this.sequences.delete(c.sid);
      const current = this.owned.get(room) === e.conference.sid;
      if (current) this.owned.delete(room);
      if (this.owned.size === 0 && this.renewal) {
        clearInterval(this.renewal);
        this.renewal = null;
      }
      // Marked ended before the claim goes: a survivor that sees the claim gone finds the mark.
      const sid = e.conference.sid;
      const done = this.d.owners
        .markEnded(sid)
        .then(async (marked) => {
          // A new conference of the room may have started here meanwhile: it keeps the claim.
          if (current && !this.owned.has(room)) await this.d.owners.release(room, this.d.self);
          // A survivor that marked it first (this node's renewals came late) still reads the note.
          await (marked ? this.d.owners.forget(sid) : this.d.owners.unlist(sid));
        })
        .catch((err) =>
          this.d.logger.warn({ err, conferenceSid: e.conference.sid }, 'room claim not released'),
        );
      this.ending.add(done);
      void done.finally(() => this.ending.delete(done));
    }
  };

  /**
   * The `<Dial><Conference>` stay of a call of this node: in the room here when this node owns it
   * (or wins its claim), else on the owner over an RTP link. `failed` when the room is full.
   */
  async join(
    j: RoomJoin,
    endpointId: string,
    opId: string,
    signal: AbortSignal,
  ): Promise<StayOutcome | 'failed'> {
    const room = roomKeyOf(j);
    // An owner that does not answer (it died, its claim still runs) is waited out: then the room
    // is claimed anew, here or elsewhere. Bounded by the claim's lease.
    const deadline = Date.now() + this.d.leaseMs + 2 * REMOTE_WATCH_MS;
    let moves = 0;
    while (moves < JOIN_ATTEMPTS && Date.now() < deadline) {
      const owner = await this.d.owners.claim(room, this.d.self, this.d.leaseMs);
      if (owner === this.d.self) {
        const seat = enterRoom(this.m, this.d.rooms, j, endpointId, opId);
        return seat ? stayInRoom(this.m, j, seat, endpointId, opId, signal) : 'failed';
      }
      const out = await this.joinOn(owner, j, endpointId, signal);
      if (out === 'moved') moves++;
      else if (out === 'unreachable') await timerSleep(REMOTE_WATCH_MS, signal);
      else return out;
    }
    return 'failed';
  }

  /** A live conference of `accountSid`, wherever it runs. */
  async get(accountSid: string, sid: string): Promise<LiveConference | null> {
    const here = this.d.rooms.get(accountSid, sid);
    if (here) return here;
    const node = await this.ownerOfSid(sid);
    if (!node) return null;
    const body = await this.ask(node, { kind: 'conference.get', accountSid, sid });
    return body && typeof body === 'object' && 'context' in body ? (body as LiveConference) : null;
  }

  /** A REST command on a conference, applied by the node that runs it. */
  async command(accountSid: string, sid: string, event: ConferenceEvent): Promise<CommandResult> {
    if (this.d.rooms.get(accountSid, sid)) return this.d.rooms.command(accountSid, sid, event);
    const node = await this.ownerOfSid(sid);
    if (!node) return 'no-conference';
    const body = await this.ask(node, { kind: 'conference.command', accountSid, sid, event });
    return body === 'ok' || body === 'no-participant' ? body : 'no-conference';
  }

  /**
   * A call's own Mute (POST /Calls/{sid}) on a call of this node seated in another node's room:
   * the owner shows it on the participant, as for a local one.
   */
  callMuted(callSid: string, muted: boolean): void {
    const a = this.away.get(callSid);
    if (!a?.conferenceSid) return;
    void this.ask(a.owner, {
      kind: 'conference.command',
      accountSid: a.join.accountSid,
      sid: a.conferenceSid,
      event: { type: 'call.muted', callSid, muted, at: Date.now() },
    });
  }

  /**
   * What the Call resource's Mute response shows of a call of this node seated in another node's
   * room (its own attributes; hold lives on the owner and shows there).
   */
  flagsOf(callSid: string): ParticipantView | null {
    const a = this.away.get(callSid);
    return a?.conferenceSid
      ? {
          startsConference: a.join.startConferenceOnEnter,
          endsConference: a.join.endConferenceOnExit,
          conferenceSid: a.conferenceSid,
          room: roomKeyOf(a.join),
          hold: false,
        }
      : null;
  }

  /** Stops the timers, lets every cross-node participant go, and waits for the ends being marked. */
  async close(): Promise<void> {
    if (this.renewal) clearInterval(this.renewal);
    this.renewal = null;
    if (this.sweep) clearInterval(this.sweep);
    this.sweep = null;
    this.hosted.releaseAll();
    for (const a of this.away.values()) a.left();
    await Promise.all(this.ending);
  }

  private async ownerOfSid(sid: string): Promise<string | null> {
    const at = await this.d.owners.whereIs(sid);
    return at && at.node !== this.d.self ? at.node : null;
  }

  /** Asks `node`; null when it does not answer (dead or overloaded). */
  private async ask(node: string, request: ConferenceRequest): Promise<unknown> {
    try {
      return await this.d.rpc.call(node, request, this.d.timeoutMs);
    } catch (err) {
      this.d.logger.debug({ err, node, kind: request.kind }, 'conference request not answered');
      return null;
    }
  }

  private renew(room: string, sid: string): void {
    const { owners, self, leaseMs } = this.d;
    void Promise.all([owners.claim(room, self, leaseMs), owners.locate(sid, self, room, leaseMs)])
      .then(([holder]) => {
        if (holder !== self)
          this.d.logger.warn({ conferenceSid: sid, holder }, 'room claimed by another node');
      })
      .catch((err) => this.d.logger.warn({ err, conferenceSid: sid }, 'room claim not renewed'));
  }

  // ------------------------------------------------------------------ the joining node's side

  /** A call of this node in `owner`'s room: relay endpoint, offer/answer, bridge, wait. */
  private async joinOn(
    owner: string,
    j: RoomJoin,
    endpointId: string,
    signal: AbortSignal,
  ): Promise<StayOutcome | 'failed' | 'moved' | 'unreachable'> {
    const relay = `${j.callSid}:cf`;
    const offer = await this.steps.create(relay, null, signal);
    if (offer === null) return 'failed';
    let left: () => void = () => {};
    // True once the owner let the participant go (or is gone): nothing to tell it then.
    let released = false;
    const ownerSaysLeft = new Promise<'completed'>((resolve) => {
      left = () => {
        released = true;
        resolve('completed');
      };
    });
    const away: Away = { left: () => left(), owner, join: j, conferenceSid: '' };
    this.away.set(j.callSid, away);
    // Ends the waits that lost the race below.
    const stop = new AbortController();
    let seated = false;
    try {
      const reply = await this.ask(owner, {
        kind: 'conference.join',
        from: this.d.self,
        join: j,
        sdp: offer,
      });
      if (reply === null) return 'unreachable';
      const r = reply as { outcome?: string; sdp?: string; conferenceSid?: string };
      if (r.outcome === 'moved') return 'moved';
      if (r?.outcome !== 'joined' || typeof r.sdp !== 'string') return 'failed';
      seated = true;
      // Known as soon as the owner seated it (the owner lists it from then on): a Mute meanwhile
      // reaches the owner and the Call resource shows the conference, as the owner's listing does.
      const conferenceSid = r.conferenceSid ?? '';
      away.conferenceSid = conferenceSid;
      if (!(await this.steps.apply(relay, r.sdp, signal))) return 'gone';
      this.d.media.bridge(endpointId, relay);
      const over = AbortSignal.any([signal, stop.signal]);
      return await Promise.race([
        ownerSaysLeft,
        this.steps.lost(endpointId, over, signal),
        this.ownerGone(owner, roomKeyOf(j), conferenceSid, over).then((how) => {
          released = true;
          return how;
        }),
      ]);
    } finally {
      stop.abort();
      if (this.away.get(j.callSid) === away) this.away.delete(j.callSid);
      // Stopped here (caller hung up, redirect, endpoint gone): the owner lets the participant go.
      if (seated && !released) void this.ask(owner, { kind: 'conference.exit', callSid: j.callSid });
      this.d.media.unbridge(endpointId, relay);
      this.d.media.release(relay);
    }
  }

  /**
   * Resolves when the owner's claim on the room is gone or taken by another node while the
   * participant is in it: the owner died (kill) or lost Redis. The room ends for this node's
   * participant, and the first survivor to see it completes the conference record.
   */
  private ownerGone(owner: string, room: string, sid: string, signal: AbortSignal): Promise<'completed'> {
    return new Promise((resolve) => {
      let busy = false;
      const timer = setInterval(() => {
        if (busy) return;
        busy = true;
        void (async () => {
          try {
            if ((await this.d.owners.ownerOf(room)) === owner) return;
            clearInterval(timer);
            if (sid) await this.orphans.end(sid);
            resolve('completed');
          } catch (err) {
            this.d.logger.debug({ err, room }, 'room owner not checked');
          } finally {
            busy = false;
          }
        })();
      }, REMOTE_WATCH_MS);
      signal.addEventListener('abort', () => clearInterval(timer), { once: true });
    });
  }

  // ------------------------------------------------------------------ the owner's side

  private async answer(r: ConferenceRequest): Promise<unknown> {
    switch (r.kind) {
      case 'conference.get':
        return this.d.rooms.get(r.accountSid, r.sid);
      case 'conference.command':
        return this.d.rooms.command(r.accountSid, r.sid, r.event);
      case 'conference.exit':
        this.hosted.exit(r.callSid);
        return 'ok';
      case 'conference.left':
        this.away.get(r.callSid)?.left();
        return 'ok';
      case 'conference.join':
        return this.hosted.host(r.from, r.join, r.sdp);
    }
  }
}
