/**
 * A live call leg in the supervisor stream's shape (docs/supervision.md, `StreamCall`) and the
 * projection of the call actor's events onto it: the stream sends a `call.updated` only when this
 * projection changed.
 */
import type { CallStatus } from '../../store/call-store.js';
import type { CallContext, CallEmitted, CallOrigin, EndCause } from '../call/call.types.js';

/** One live call leg as the stream shows it. Times are epoch ms. */
export interface StreamCall {
  readonly sid: string;
  /** Instance id of the node the leg lives on. */
  readonly node: string;
  readonly accountSid: string;
  readonly parentCallSid: string | null;
  readonly direction: CallOrigin['direction'];
  readonly from: string;
  readonly to: string;
  /** REST status while live: queued, ringing or in-progress. */
  readonly status: 'queued' | 'ringing' | 'in-progress';
  readonly answered: boolean;
  readonly dateCreated: number;
  readonly answeredAt: number | null;
  /** The leg a `<Dial>` bridged it with. */
  readonly bridged: string | null;
  readonly muted: boolean;
  /** Conference room (`AC…:name`) the leg is in. */
  readonly conference: string | null;
  readonly lastSipStatus: number | null;
  /** The markup verb running now. */
  readonly verb: string | null;
}

export type CallStreamEvent =
  | { type: 'call.created'; seq: number; at: number; call: StreamCall }
  | { type: 'call.updated'; seq: number; at: number; call: StreamCall }
  | {
      type: 'call.ended';
      seq: number;
      at: number;
      call: StreamCall;
      status: CallStatus;
      cause: EndCause;
      sipStatus: number | null;
      /** Seconds answered (0 when never answered). */
      duration: number;
    };

function statusOf(c: CallContext, e: CallEmitted, previous: StreamCall | undefined): StreamCall['status'] {
  if (c.answeredAt !== null) return 'in-progress';
  if (e.type === 'call.ringing' || previous?.status === 'ringing') return 'ringing';
  // An inbound leg rings from its creation (the machine sends 180 at once).
  return c.origin.direction === 'inbound' ? 'ringing' : 'queued';
}

function lastSipStatusOf(c: CallContext, e: CallEmitted, previous: StreamCall | undefined): number | null {
  if (c.sip.outcome) return c.sip.outcome.status;
  if (c.answeredAt !== null) return 200;
  if (e.type === 'call.ringing') return 180;
  return previous?.lastSipStatus ?? null;
}

function verbOf(e: CallEmitted, previous: StreamCall | undefined): string | null {
  if (e.type === 'verb.started') return e.verb;
  const running = previous?.verb ?? null;
  return e.type === 'verb.finished' && running === e.verb ? null : running;
}

export function projectionOf(node: string, e: CallEmitted, previous: StreamCall | undefined): StreamCall {
  const c = e.call;
  return {
    sid: c.origin.sid,
    node,
    accountSid: c.origin.accountSid,
    parentCallSid: c.origin.parentCallSid,
    direction: c.origin.direction,
    from: c.origin.from,
    to: c.origin.to,
    status: statusOf(c, e, previous),
    answered: c.answeredAt !== null,
    dateCreated: c.origin.createdAt,
    answeredAt: c.answeredAt,
    bridged: c.peer,
    muted: c.media.muted,
    conference: c.media.room,
    lastSipStatus: lastSipStatusOf(c, e, previous),
    verb: verbOf(e, previous),
  };
}

/** Every field of a `StreamCall` (the type makes the list complete), listed once per process. */
const STREAM_CALL_FIELDS: Record<keyof StreamCall, true> = {
  sid: true,
  node: true,
  accountSid: true,
  parentCallSid: true,
  direction: true,
  from: true,
  to: true,
  status: true,
  answered: true,
  dateCreated: true,
  answeredAt: true,
  bridged: true,
  muted: true,
  conference: true,
  lastSipStatus: true,
  verb: true,
};
const STREAM_CALL_KEYS = Object.keys(STREAM_CALL_FIELDS) as (keyof StreamCall)[];

export function sameCall(a: StreamCall, b: StreamCall): boolean {
  for (const k of STREAM_CALL_KEYS) if (a[k] !== b[k]) return false;
  return true;
}
