/**
 * The live legs of SipLegs and what every part of it does to one: find it by id, by dialog or by
 * INVITE branch, announce its events (a terminal event retires it), keep its timers, send its BYE.
 * Ended legs linger for Timer B to absorb retransmissions and late answers, then are forgotten.
 */
import type { Logger } from 'pino';
import { type Dialog, nextRequest } from './dialog.js';
import type { Flow } from './flow.js';
import { detached, type SipRequest, type SipResponse } from './message.js';
import { type MessageBody, type PlaceCall, type SipEvent, TERMINAL_SIP_EVENTS } from './port.js';
import type { ClientRequest, SipStack } from './stack.js';
import { SipTimers } from './timers.js';

export type LegState = 'calling' | 'early' | 'answered' | 'confirmed' | 'ended';

export interface Leg {
  readonly id: string;
  readonly role: 'uac' | 'uas';
  state: LegState;
  dialog: Dialog | null;
  /** A terminal event was emitted. */
  terminal: boolean;
  /** Ended by us before it was answered: a late 2xx gets ACK + BYE. */
  abandoned: boolean;
  readonly localTag: string;
  readonly callId: string;
  localSdp: string | null;
  readonly flow: Flow | null;
  readonly timers: Set<NodeJS.Timeout>;
  // UAS (`invite` and `ok` are dropped once the ACK arrives: a held call keeps only its dialog)
  /** `callId|branch` of the INVITE in `byInvite`. */
  inviteKey?: string;
  invite?: SipRequest;
  /** The 100 Trying still to send if no other response comes first (§17.2.1). */
  trying?: NodeJS.Timeout;
  ok?: SipResponse;
  /** The 2xx's next retransmission, or the end of the wait for its ACK (one timer: SipLegs.awaitAck). */
  ackWait?: NodeJS.Timeout;
  byeAfterAck?: boolean;
  /** The body of that BYE (a USSD session's last message). */
  byeBody?: MessageBody | undefined;
  // UAC
  client?: ClientRequest;
  call?: PlaceCall;
  ack?: SipRequest;
  authTried?: boolean;
}

export class LegTable {
  private readonly legs = new Map<string, Leg>();
  /** `callId|localTag` → leg id (in-dialog requests carry our tag in To). */
  private readonly byDialog = new Map<string, string>();
  /** `callId|branch` of inbound INVITEs → leg id (for CANCEL). */
  private readonly byInvite = new Map<string, string>();
  private readonly listeners = new Set<(e: SipEvent) => void>();

  constructor(
    private readonly stack: SipStack,
    private readonly log: Logger,
    /** Told when a leg ends (its REFER subscriptions end with it). */
    private readonly onEnded: (legId: string) => void,
  ) {}

  /** Subscribes to leg events; returns an unsubscribe function. */
  subscribe(listener: (e: SipEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  add(leg: Leg): void {
    this.legs.set(leg.id, leg);
    this.byDialog.set(`${leg.callId}|${leg.localTag}`, leg.id);
  }

  /** Remembers the INVITE's branch, so that its CANCEL finds the leg. */
  indexInvite(leg: Leg, branch: string): void {
    leg.inviteKey = detached(`${leg.callId}|${branch}`);
    this.byInvite.set(leg.inviteKey, leg.id);
  }

  get(legId: string): Leg | undefined {
    return this.legs.get(legId);
  }

  inDialog(callId: string, localTag: string | undefined): Leg | undefined {
    const legId = this.byDialog.get(`${callId}|${localTag}`);
    return legId ? this.legs.get(legId) : undefined;
  }

  ofInvite(callId: string, branch: string): Leg | undefined {
    const legId = this.byInvite.get(`${callId}|${branch}`);
    return legId ? this.legs.get(legId) : undefined;
  }

  all(): Leg[] {
    return [...this.legs.values()];
  }

  get size(): number {
    return this.legs.size;
  }

  /** Legs that have not ended yet. */
  get active(): number {
    let n = 0;
    for (const leg of this.legs.values()) if (!leg.terminal) n++;
    return n;
  }

  emit(leg: Leg, event: SipEvent): void {
    if (leg.terminal) return;
    if (TERMINAL_SIP_EVENTS.has(event.type)) {
      leg.terminal = true;
      this.retire(leg);
    }
    this.broadcast(event);
  }

  /** To the leg when it is still known, else to the listeners as is (a late result). */
  emitTo(legId: string, event: SipEvent): void {
    const leg = this.legs.get(legId);
    if (leg) this.emit(leg, event);
    else this.broadcast(event);
  }

  /** An event that belongs to no leg (a MESSAGE's result). */
  broadcast(event: SipEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch (err) {
        this.log.error({ err, event: event.type }, 'sip event listener failed');
      }
    }
  }

  /** Keeps an ended leg long enough to absorb retransmissions and late answers, then forgets it. */
  private retire(leg: Leg): void {
    leg.state = 'ended';
    this.onEnded(leg.id);
    const t = setTimeout(() => this.forget(leg), SipTimers.TIMER_B);
    t.unref();
    leg.timers.add(t);
  }

  forget(leg: Leg): void {
    for (const t of leg.timers) clearTimeout(t);
    leg.timers.clear();
    this.legs.delete(leg.id);
    this.byDialog.delete(`${leg.callId}|${leg.localTag}`);
    if (leg.inviteKey) this.byInvite.delete(leg.inviteKey);
  }

  /** The INVITE gets its first response now: no 100 Trying after it. */
  responding(leg: Leg): void {
    if (!leg.trying) return;
    clearTimeout(leg.trying);
    leg.timers.delete(leg.trying);
    leg.trying = undefined;
  }

  timer(leg: Leg, ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      leg.timers.delete(t);
      try {
        fn();
      } catch (err) {
        this.log.error({ err, legId: leg.id }, 'sip leg timer failed');
      }
    }, ms);
    leg.timers.add(t);
    return t;
  }

  sendBye(leg: Leg, body?: MessageBody): void {
    if (!leg.dialog) return;
    const { dialog, request } = nextRequest(leg.dialog, 'BYE', body);
    leg.dialog = dialog;
    this.stack.send(request, () => {}, dialog.flow ? { flow: dialog.flow } : {});
  }
}

/**
 * Whether the leg's 2xx still waits for its ACK: answered, or hung up since (§15: its BYE waits for
 * the ACK, or for the wait to end, and the 2xx is retransmitted meanwhile).
 */
export function awaitingAck(leg: Leg): boolean {
  return (
    leg.ok !== undefined && (leg.state === 'answered' || (leg.state === 'ended' && leg.byeAfterAck === true))
  );
}

/** The 2xx was acknowledged (or given up on): only the dialog is needed from now on. */
export function confirm(leg: Leg): void {
  leg.state = 'confirmed';
  leg.invite = undefined;
  leg.ok = undefined;
  if (leg.ackWait) {
    clearTimeout(leg.ackWait);
    leg.timers.delete(leg.ackWait);
    leg.ackWait = undefined;
  }
}
