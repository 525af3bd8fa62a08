/**
 * The interpreter's view of a call, implemented over the call runtime: `CallControl` (answer,
 * reject, hang up, send digits) and `Dialer` (`<Dial>` of numbers, clients and SIP URIs).
 *
 * Dial semantics (Twilio): every target rings at once; the first to answer is bridged to the
 * caller (media bridge of the two endpoints) and the others are canceled; the bridge lasts until
 * either side hangs up or `timeLimit` passes. DialCallStatus is `completed` for a bridged call,
 * else the outcome of the leg that ended last (busy, no-answer, failed, canceled).
 *
 * Noun `url` (whisper): once the called party answers, that markup runs on its leg (with its own
 * CallSid, Direction outbound-dial); the bridge follows when the document ends. If it hangs the
 * called party up (screening), nothing is bridged: DialCallStatus `completed` (it answered), and the
 * caller goes on with the action or next verb.
 *
 * Number `sendDigits`: played to the called party as DTMF once it answered (`w` = half a second).
 *
 * Dial `hangupOnStar`: `*` from the caller while bridged hangs up the called party (the Dial ends
 * `completed` and the caller's markup goes on).
 *
 * Dial `record`: the parent's endpoint records both parties mixed (mono) from the answer
 * (`record-from-answer`) or from the start of ringing (`record-from-ringing`); the `-dual` values
 * record the same mono mix (docs/decisions.md). The Recording belongs to the parent call and is
 * stored even when the caller hangs up; the outcome carries it for the Dial action.
 */
import { newSid, SidPrefix } from '../../ids.js';
import type { MediaEvent, MediaPort } from '../../media/port.js';
import { type AnswerOutcome, InterpreterErrorCode } from '../interpreter/interpreter.types.js';
import type {
  CallControl,
  CreatedRecording,
  DialCallStatus,
  Dialer,
  DialOutcome,
  DialRequest,
  DialTarget,
  InterpreterServices,
  MediaEvents,
  ReferOutcome,
  ReplyTo,
} from '../interpreter/services.js';
import type { CallEnd, ChildLeg, LegControl } from './leg-control.js';

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
    private readonly runtime: LegControl,
    private readonly media: MediaPort,
    /** Per-endpoint media events (one port subscription for all calls). */
    private readonly mediaEvents: MediaEvents,
    private readonly recordings: Pick<InterpreterServices, 'createRecording' | 'notify'>,
  ) {}

  answer(callSid: string, replyTo: ReplyTo<AnswerOutcome>): void {
    this.runtime.answer(callSid, replyTo);
  }

  reject(callSid: string, reason: 'rejected' | 'busy'): void {
    this.runtime.intent(callSid, { type: 'app.reject', reason, at: Date.now() });
  }

  hangup(callSid: string): void {
    // `app.hangup` ends the leg wherever it has a transition; Status=completed covers the rest.
    if (!this.runtime.intent(callSid, { type: 'app.hangup', at: Date.now() })) this.runtime.end(callSid);
  }

  sendDigits(callSid: string, digits: string, signal: AbortSignal): Promise<void> {
    return this.runtime.sendDigits(callSid, digits, signal);
  }

  refer(callSid: string, referTo: string, signal: AbortSignal): Promise<ReferOutcome> {
    return this.runtime.refer(callSid, referTo, signal);
  }

  async dial(request: DialRequest, signal: AbortSignal): Promise<DialOutcome> {
    const legs: ChildLeg[] = [];
    const endAll = () => {
      for (const l of legs) l.hangUp();
    };
    signal.addEventListener('abort', endAll, { once: true });
    const recording =
      request.record === 'do-not-record'
        ? null
        : new DialRecording(this.media, this.mediaEvents, this.recordings, request);
    if (request.record.startsWith('record-from-ringing')) recording?.start();
    try {
      const targetOf = new Map<ChildLeg, DialTarget>();
      for (const target of request.targets) {
        if (signal.aborted) break;
        const credentials =
          target.kind === 'sip' && target.username
            ? { username: target.username, password: target.password ?? '' }
            : null;
        const leg = await this.runtime.dialChild(request.callSid, dialTo(target), {
          callerId: request.callerId,
          timeoutSeconds: request.timeoutSeconds,
          credentials,
        });
        legs.push(leg);
        targetOf.set(leg, target);
      }
      if (legs.length === 0) return { status: 'failed', dialCallSid: null, durationSeconds: 0 };
      const winner = await firstAnswered(legs);
      if (winner) this.runtime.dialDecided(request.callSid, 200, winner.sid);
      if (!winner) {
        const ends = await Promise.all(legs.map((l) => l.ended));
        const last = ends[ends.length - 1]!;
        this.runtime.dialDecided(request.callSid, last.sipStatus ?? 480, legs[legs.length - 1]!.sid, last);
        return {
          status: dialStatusOf(last),
          dialCallSid: null,
          durationSeconds: 0,
          sipResponseCode: last.sipStatus,
          recording: await recording?.finish(),
        };
      }
      for (const l of legs) if (l !== winner) l.hangUp();
      const target = targetOf.get(winner);
      // The noun's `url` runs on the called party first; if it hangs up, nothing is bridged.
      if (target?.url && !(await winner.whisper(target.url, target.method))) {
        const end = await winner.ended;
        return { status: 'completed', dialCallSid: winner.sid, durationSeconds: end.durationSeconds };
      }
      this.media.bridge(request.endpointId, winner.sid);
      recording?.start();
      // Number sendDigits: DTMF to the called party once it answers (RFC 4733, else in-band).
      const digits = target?.kind === 'number' ? target.sendDigits : null;
      if (digits) this.media.play(winner.sid, `dial-digits:${winner.sid}`, { kind: 'digits', digits });
      // hangupOnStar: the caller pressing * ends the called party; the caller's markup goes on.
      const offStar = request.hangupOnStar
        ? this.mediaEvents.on(request.endpointId, (e) => {
            if (e.type === 'media.dtmf' && e.digit === '*') winner.hangUp();
          })
        : null;
      this.runtime.setPeers(request.callSid, winner.sid);
      const limit =
        request.timeLimitSeconds > 0
          ? setTimeout(() => winner.hangUp(), request.timeLimitSeconds * 1000)
          : null;
      const end = await winner.ended;
      offStar?.();
      if (limit) clearTimeout(limit);
      this.media.unbridge(request.endpointId, winner.sid);
      this.runtime.endBridge(request.callSid, winner.sid);
      return {
        status: 'completed',
        dialCallSid: winner.sid,
        durationSeconds: end.durationSeconds,
        recording: await recording?.finish(),
      };
    } finally {
      signal.removeEventListener('abort', endAll);
      // Ended by an error or an abort before finish(): the recording is still stored.
      void recording?.finish();
    }
  }
}

/** How long to wait for the engine to write a stopped recording. */
const RECORDING_WRITE_TIMEOUT_MS = 30_000;

/** The recording of one `<Dial record>`: started once, finished (and stored) once. */
class DialRecording {
  private readonly opId = `dial-record:${newSid(SidPrefix.Recording)}`;
  private readonly recordingSid = newSid(SidPrefix.Recording);
  private ended: Promise<Extract<MediaEvent, { type: 'media.recordDone' }> | null> | null = null;
  private stored: Promise<CreatedRecording | null> | null = null;

  constructor(
    private readonly media: MediaPort,
    private readonly mediaEvents: MediaEvents,
    private readonly recordings: Pick<InterpreterServices, 'createRecording' | 'notify'>,
    private readonly request: DialRequest,
  ) {}

  start(): void {
    if (this.ended) return;
    const endpointId = this.request.endpointId;
    this.ended = new Promise((resolve) => {
      const finish = (v: Extract<MediaEvent, { type: 'media.recordDone' }> | null) => {
        off();
        clearTimeout(timer);
        resolve(v);
      };
      const off = this.mediaEvents.on(endpointId, (e) => {
        if ((e.type === 'media.recordDone' || e.type === 'media.recordFailed') && e.opId === this.opId) {
          finish(e.type === 'media.recordDone' ? e : null);
        } else if (e.type === 'media.endpointLost') finish(null);
      });
      // Bounded: the call's time limit plus its ringing, plus the time to write the file.
      const timer = setTimeout(
        () => finish(null),
        (this.request.timeLimitSeconds + this.request.timeoutSeconds) * 1000 + RECORDING_WRITE_TIMEOUT_MS,
      );
      timer.unref();
    });
    this.media.record(endpointId, this.opId, {
      recordingSid: this.recordingSid,
      maxLengthSeconds: this.request.timeLimitSeconds + this.request.timeoutSeconds,
      silenceTimeoutSeconds: 0,
      finishOnKey: '',
      playBeep: false,
      mix: 'both',
      trimLeadingSilence: false,
    });
  }

  /** Stops the recording and stores it; null when nothing was recorded or it failed. */
  finish(): Promise<CreatedRecording | null> {
    if (!this.ended) return Promise.resolve(null);
    this.stored ??= (async () => {
      this.media.stop(this.request.endpointId);
      const done = await this.ended;
      if (!done || done.durationSeconds <= 0) return null;
      const { accountSid, callSid } = this.request;
      return this.recordings
        .createRecording({
          recordingSid: done.recordingSid,
          accountSid,
          callSid,
          durationSeconds: done.durationSeconds,
        })
        .catch((err: unknown) => {
          this.recordings.notify({
            accountSid,
            callSid,
            errorCode: InterpreterErrorCode.InternalFailure,
            messageText: `<Dial record> recording could not be stored: ${err instanceof Error ? err.message : String(err)}`,
          });
          return null;
        });
    })();
    return this.stored;
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
