/**
 * The interpreter's view of a call, implemented over the call runtime: `CallControl` (answer,
 * reject, hang up, send digits) and `Dialer` (`<Dial>` of numbers, clients and SIP URIs).
 *
 * Dial semantics (Twilio): every target rings at once; the first to answer is bridged to the
 * caller (media bridge of the two endpoints) and the others are canceled; the bridge lasts until
 * either side hangs up or `timeLimit` passes. DialCallStatus is `completed` for a bridged call,
 * else the outcome of the leg that ended last (busy, no-answer, failed, canceled).
 */
import type { MediaPort } from '../../media/port.js';
import type {
  CallControl,
  DialCallStatus,
  Dialer,
  DialOutcome,
  DialRequest,
  DialTarget,
} from '../interpreter/services.js';
import type { CallEnd, CallRuntime, ChildLeg } from './call-runtime.js';

/** The To of a child leg for a Dial target. */
export function dialTo(target: DialTarget): string {
  switch (target.kind) {
    case 'number':
      return target.number;
    case 'client':
      return `client:${target.name}`;
    case 'sip':
      return target.uri;
  }
}

/** DialCallStatus of a child leg that was never bridged. */
export function dialStatusOf(end: CallEnd): DialCallStatus {
  switch (end.status) {
    case 'busy':
      return 'busy';
    case 'no-answer':
      return 'no-answer';
    case 'canceled':
      return 'canceled';
    case 'completed':
      return 'completed';
    default:
      return 'failed';
  }
}

export class RuntimeCallControl implements CallControl, Dialer {
  constructor(
    private readonly runtime: CallRuntime,
    private readonly media: MediaPort,
  ) {}

  answer(callSid: string, signal: AbortSignal): Promise<void> {
    return this.runtime.answer(callSid, signal);
  }

  reject(callSid: string, reason: 'rejected' | 'busy'): void {
    this.runtime.intent(callSid, { type: 'app.reject', reason, at: Date.now() });
  }

  hangup(callSid: string): void {
    this.runtime.intent(callSid, { type: 'app.hangup', at: Date.now() });
    this.runtime.end(callSid);
  }

  sendDigits(callSid: string, digits: string, signal: AbortSignal): Promise<void> {
    return this.runtime.sendDigits(callSid, digits, signal);
  }

  async dial(request: DialRequest, signal: AbortSignal): Promise<DialOutcome> {
    const legs: ChildLeg[] = [];
    const endAll = () => {
      for (const l of legs) l.hangUp();
    };
    signal.addEventListener('abort', endAll, { once: true });
    try {
      for (const target of request.targets) {
        if (signal.aborted) break;
        const credentials =
          target.kind === 'sip' && target.username
            ? { username: target.username, password: target.password ?? '' }
            : null;
        legs.push(
          await this.runtime.dialChild(request.callSid, dialTo(target), {
            callerId: request.callerId,
            timeoutSeconds: request.timeoutSeconds,
            credentials,
          }),
        );
      }
      if (legs.length === 0) return { status: 'failed', dialCallSid: null, durationSeconds: 0 };
      const winner = await firstAnswered(legs);
      if (!winner) {
        const ends = await Promise.all(legs.map((l) => l.ended));
        const last = ends[ends.length - 1]!;
        return {
          status: dialStatusOf(last),
          dialCallSid: null,
          durationSeconds: 0,
          sipResponseCode: last.sipStatus,
        };
      }
      for (const l of legs) if (l !== winner) l.hangUp();
      this.media.bridge(request.endpointId, winner.sid);
      this.runtime.setPeers(request.callSid, winner.sid);
      const limit =
        request.timeLimitSeconds > 0
          ? setTimeout(() => winner.hangUp(), request.timeLimitSeconds * 1000)
          : null;
      const end = await winner.ended;
      if (limit) clearTimeout(limit);
      this.media.unbridge(request.endpointId, winner.sid);
      this.runtime.setPeers(request.callSid, null);
      return { status: 'completed', dialCallSid: winner.sid, durationSeconds: end.durationSeconds };
    } finally {
      signal.removeEventListener('abort', endAll);
    }
  }
}

/** The first leg to answer, or null when every leg ended unanswered. */
async function firstAnswered(legs: readonly ChildLeg[]): Promise<ChildLeg | null> {
  return new Promise((resolve) => {
    let pending = legs.length;
    for (const l of legs) {
      void l.answered.then((yes) => {
        if (yes) resolve(l);
        else if (--pending === 0) resolve(null);
      });
    }
  });
}
