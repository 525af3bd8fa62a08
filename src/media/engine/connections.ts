/**
 * Who hears whom: bridges (two endpoints hear each other, DTMF included) and conference rooms
 * (each member hears the room's mix minus itself, or wait music while alone). An endpoint is in at
 * most one of them; joining one leaves the other.
 */
import type { Logger } from 'pino';
import type { ConferenceJoinOptions, MediaEvent } from '../port.js';
import { Room } from './conference.js';
import { MEDIA } from './constants.js';
import type { Endpoint } from './endpoint.js';
import type { EngineContext } from './engine-context.js';
import type { Operations } from './operations.js';
import { tone } from './pcm.js';
import type { RtpPacket } from './rtp.js';
import type { PlayOp } from './running-ops.js';

/** Bridges and conference rooms (see the file header). */
export class Connections {
  readonly rooms = new Map<string, Room>();
  private readonly endpoints: Map<string, Endpoint>;
  private readonly logger: Logger;
  private readonly emit: (event: MediaEvent) => void;
  private readonly roomBeepTone = tone(MEDIA.BEEP_HZ, MEDIA.CONFERENCE_BEEP_MS, 4000);

  constructor(
    cx: EngineContext,
    private readonly ops: Operations,
  ) {
    this.endpoints = cx.endpoints;
    this.logger = cx.logger;
    this.emit = cx.emit;
  }

  /** A bridge carries DTMF too (Dial to an IVR): unless muted, the peer relays the event. */
  relayEvent(e: Endpoint, pkt: RtpPacket): void {
    if (e.bridgePeer && !e.muted) e.bridgePeer.relayEvent(pkt, e.tsPerTick);
  }

  bridge(aId: string, bId: string): void {
    const a = this.endpoints.get(aId);
    const b = this.endpoints.get(bId);
    if (!a || !b || a === b) {
      this.logger.warn({ a: aId, b: bId }, 'bridge: unknown endpoint');
      return;
    }
    for (const ep of [a, b]) {
      if (ep.room) this.leave(ep);
      if (ep.bridgePeer) this.unbridge(ep);
    }
    a.bridgePeer = b;
    b.bridgePeer = a;
  }

  unbridge(ep: Endpoint): void {
    const peer = ep.bridgePeer;
    ep.bridgePeer = null;
    if (peer && peer.bridgePeer === ep) peer.bridgePeer = null;
  }

  join(id: string, opts: ConferenceJoinOptions): void {
    const ep = this.endpoints.get(id);
    if (!ep) {
      this.logger.warn({ endpointId: id }, 'conference join: unknown endpoint');
      return;
    }
    if (ep.bridgePeer) this.unbridge(ep);
    if (ep.room === opts.room) return;
    if (ep.room) this.leave(ep);
    let room = this.rooms.get(opts.room);
    if (!room) {
      room = new Room(opts.room);
      this.rooms.set(opts.room, room);
    }
    room.add(ep);
    ep.room = opts.room;
    ep.roomBeep = opts.beep ?? false;
    if (opts.muted !== undefined) ep.muted = opts.muted;
    if (opts.beep) room.beep(this.roomBeepTone);
    if (opts.waitMusic) {
      const op: PlayOp = {
        opId: `${id}:wait`,
        interruptOnDtmf: false,
        internal: true,
        pcm: null,
        pos: 0,
        loopsLeft: Infinity,
      };
      ep.waitMusic = op;
      this.ops.loadInto(ep, op, opts.waitMusic);
    }
    this.emit({
      type: 'media.conferenceJoined',
      endpointId: id,
      room: opts.room,
      participants: room.members.size,
    });
  }

  leave(ep: Endpoint): void {
    const name = ep.room;
    if (!name) return;
    const room = this.rooms.get(name);
    ep.room = null;
    ep.waitMusic = null;
    let left = 0;
    if (room) {
      room.remove(ep);
      left = room.members.size;
      if (left === 0) this.rooms.delete(name);
      else if (ep.roomBeep) room.beep(this.roomBeepTone);
    }
    this.emit({ type: 'media.conferenceLeft', endpointId: ep.id, room: name, participants: left });
  }
}
