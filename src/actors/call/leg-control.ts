/**
 * Control of live legs for what runs calls: the interpreter's CallControl and Dialer
 * (call-control.ts) and the client bridge. Each command is an event to the leg's actor; each wait
 * observes what the actor emits or its state, never a promise kept on the side.
 */
import { createActor, waitFor } from 'xstate';
import { AppError } from '../../errors.js';
import type { MediaPort } from '../../media/port.js';
import { REFER_SUBSCRIPTION_SECONDS } from '../../sip/port.js';
import { CallStatus } from '../../store/call-store.js';
import type { HttpMethod } from '../../webhooks/index.js';
import type { AnswerOutcome } from '../interpreter/interpreter.types.js';
import type { ReferOutcome, ReplyTo } from '../interpreter/services.js';
import { statusOf } from './call.machine.js';
import type { CallEvent } from './call.types.js';
import type { CallActor, CallRuntime } from './call-runtime.js';
import { inputOf, newRecord } from './records.js';
import { reportTransfer } from './transfer.js';

/** How a leg ended. */
export interface CallEnd {
  readonly status: CallStatus;
  readonly durationSeconds: number;
  readonly sipStatus: number | null;
  /** Call-ID of the leg's INVITE and X- headers of its final response (outbound legs). */
  readonly sipCallId?: string | null;
  readonly sipHeaders?: Readonly<Record<string, string>>;
}

/** A `<Dial>` child leg as the Dialer sees it. */
export interface ChildLeg {
  readonly sid: string;
  /** Resolves true when answered, false when it ended first. */
  readonly answered: Promise<boolean>;
  /** Resolves once the leg's record is closed. */
  readonly ended: Promise<CallEnd>;
  hangUp(): void;
  /**
   * Runs markup on the answered leg before it is bridged (Dial noun `url`, the "whisper"); resolves
   * true when the document ended with the leg still up, false when the leg ended.
   */
  whisper(url: string, method: HttpMethod): Promise<boolean>;
}

const ANSWERED: AnswerOutcome = { type: 'call.answered' };
const ANSWER_FAILED: AnswerOutcome = { type: 'call.answerFailed' };

export class LegControl {
  constructor(
    private readonly calls: CallRuntime,
    private readonly media: Pick<MediaPort, 'bridge'>,
  ) {}

  /** Ends a live call whatever its state (Status=completed semantics); no-op when gone. */
  end(sid: string): void {
    this.calls.end(sid);
  }

  /** Places a `<Dial>` child leg (outbound-dial) of `parentSid`; not subject to REST admission. */
  async dialChild(
    parentSid: string,
    to: string,
    opts: {
      readonly callerId: string;
      readonly timeoutSeconds: number;
      readonly credentials?: { readonly username: string; readonly password: string } | null;
    },
  ): Promise<ChildLeg> {
    const parent = this.calls.contextOf(parentSid);
    if (!parent) throw new AppError('Conflict', `Call ${parentSid} is not live`);
    const record = newRecord({
      accountSid: parent.origin.accountSid,
      from: opts.callerId,
      to,
      direction: 'outbound-dial',
      status: CallStatus.Queued,
      apiVersion: parent.origin.apiVersion,
      parentCallSid: parentSid,
    });
    await this.calls.insert(record);
    const ended = new Promise<CallEnd>((resolve) => this.calls.onEnded(record.sid, resolve));
    const actor = createActor(this.calls.machine, {
      input: {
        ...inputOf(record),
        timeoutSeconds: opts.timeoutSeconds,
        credentials: opts.credentials ?? null,
      },
    });
    // Subscribed before the actor starts: nothing it emits can be missed.
    const answered = outcome(actor, 'call.answered');
    this.calls.start(actor, record.sid);
    return {
      sid: record.sid,
      answered,
      ended,
      hangUp: () => {
        if (!this.calls.contextOf(record.sid)?.detached) this.end(record.sid);
      },
      whisper: (url, method) => {
        const a = this.calls.actorOf(record.sid);
        if (!a) return Promise.resolve(false);
        const result = outcome(a, 'call.whispered');
        a.send({ type: 'app.whisper', url, method });
        return result;
      },
    };
  }

  /** Records that two legs are bridged by a `<Dial>` (null: the bridge ended). */
  setPeers(a: string, b: string | null): void {
    const at = Date.now();
    this.calls.send(a, { type: 'app.bridged', peer: b, at });
    if (b) this.calls.send(b, { type: 'app.bridged', peer: a, at });
  }

  /**
   * The bridge of `a` with `b` is over: `a` has no peer any more, unless it was bridged with another
   * leg meanwhile (a transferred call bridged to its new party before its old Dial wound down).
   */
  endBridge(a: string, b: string): void {
    if (this.calls.contextOf(a)?.peer === b) this.setPeers(a, null);
  }

  /**
   * A `<Dial>` of `parentSid` decided: 200 when a leg answered, else the last leg's SIP status. A
   * transferred call's transferor hears it in its final NOTIFY (transfer.ts).
   */
  dialDecided(parentSid: string, status: number, legSid: string, end?: CallEnd): void {
    reportTransfer(this.calls, parentSid, status);
    // A leg that ended is no longer live: its end carries what its callbacks name.
    const leg = this.calls.contextOf(legSid);
    this.calls.send(parentSid, {
      type: 'app.dialed',
      leg: {
        sid: legSid,
        sipCallId: end?.sipCallId ?? leg?.sip.finalResponse?.callId ?? leg?.sip.dialog?.callId ?? null,
        sipStatus: end?.sipStatus ?? leg?.sip.outcome?.status ?? status,
        sipHeaders: end?.sipHeaders ?? leg?.sip.finalResponse?.headers ?? {},
      },
    });
  }

  // ---- call control (the interpreter's CallControl) --------------------------------------------

  /**
   * Answers an inbound leg: its endpoint answers the caller's offer, 200 goes out, and `replyTo`
   * hears `call.answered` when the ACK arrives (at once when the leg is up already), or
   * `call.answerFailed` when the leg is gone or ends first. The leg's own bounds (ENDPOINT_TIMEOUT,
   * the ACK timeout) end it when the answer cannot complete, so the wait needs no timer of its own.
   */
  answer(sid: string, replyTo: ReplyTo<AnswerOutcome>): void {
    const actor = this.calls.actorOf(sid);
    const snap = actor?.getSnapshot();
    if (!actor || !snap) {
      replyTo.send(ANSWER_FAILED);
      return;
    }
    if (statusOf(snap) === CallStatus.InProgress) {
      replyTo.send(ANSWERED);
      return;
    }
    if (!snap.matches('incoming') && !snap.matches('answering')) {
      replyTo.send(ANSWER_FAILED);
      return;
    }
    let settled = false;
    // Watched before the answer is sent: its outcome may come back while it is being sent.
    const watch = actor.subscribe({
      next: (s) => {
        if (s.context.sip.confirmed) settle(ANSWERED);
        else if (s.status !== 'active') settle(ANSWER_FAILED);
      },
      error: () => settle(ANSWER_FAILED),
    });
    function settle(outcome: AnswerOutcome) {
      if (settled) return;
      settled = true;
      watch.unsubscribe();
      replyTo.send(outcome);
    }
    actor.send({ type: 'app.answer', at: Date.now() });
  }

  /** `answer` as a promise, for what awaits it (the client bridge): rejects when the answer fails. */
  private answered(sid: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.answer(sid, {
        send: (outcome) => {
          signal.removeEventListener('abort', onAbort);
          if (outcome.type === 'call.answered') resolve();
          else reject(new Error(`call ${sid} ended before it was answered`));
        },
      });
    });
  }

  /** Sends an app intent (`app.reject`, `app.hangup`) to the call actor; false when it has no effect. */
  intent(sid: string, event: Extract<CallEvent, { type: 'app.reject' | 'app.hangup' }>): boolean {
    return this.calls.sendIfCan(sid, event);
  }

  /** DTMF to the far end (SIP INFO); resolves when sent, or at once when the call is not up. */
  async sendDigits(sid: string, digits: string, signal: AbortSignal): Promise<void> {
    const actor = this.calls.actorOf(sid);
    if (!actor || !this.calls.sendIfCan(sid, { type: 'app.sendDigits', digits })) return;
    const stop = () => this.calls.send(sid, { type: 'app.stopDigits' });
    signal.addEventListener('abort', stop, { once: true });
    try {
      await waitFor(actor, (s) => !s.matches({ inProgress: 'sendingDigits' }), {
        timeout: Number.POSITIVE_INFINITY,
      });
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  /**
   * `<Refer>`: REFER to the far end of an answered leg; resolves with the REFER's final response and
   * the last NOTIFY's status once final, the leg ended, or the subscription's life passed.
   */
  async refer(sid: string, referTo: string, signal: AbortSignal): Promise<ReferOutcome> {
    const actor = this.calls.actorOf(sid);
    if (!actor || !this.calls.sendIfCan(sid, { type: 'app.refer', referTo }))
      return { referStatus: 481, notifyStatus: null, ended: true };
    const snap = await waitFor(actor, (s) => s.status !== 'active' || (s.context.referOut?.final ?? false), {
      timeout: REFER_SUBSCRIPTION_SECONDS * 1000,
      signal,
    }).catch(() => actor.getSnapshot());
    const o = snap.context.referOut;
    return {
      referStatus: o?.response ?? 408,
      notifyStatus: o?.notify ?? null,
      ended: snap.status !== 'active',
    };
  }

  /** A registered client called another client directly: answer once the callee answers, bridge. */
  async bridgeClient(sid: string, login: string, signal: AbortSignal): Promise<void> {
    const caller = this.calls.contextOf(sid);
    if (!caller) return;
    try {
      const child = await this.dialChild(sid, `client:${login}`, {
        callerId: caller.origin.from,
        timeoutSeconds: 60,
      });
      signal.addEventListener('abort', () => child.hangUp(), { once: true });
      if (!(await child.answered)) {
        const end = await child.ended;
        this.intent(sid, {
          type: 'app.reject',
          reason: end.status === 'busy' ? 'busy' : 'rejected',
          at: Date.now(),
        });
        return;
      }
      await this.answered(sid, signal);
      this.media.bridge(sid, child.sid);
      await child.ended;
    } finally {
      this.intent(sid, { type: 'app.hangup', at: Date.now() });
    }
  }
}

/** Resolves true on `type`, false when the call ends first. */
function outcome(actor: CallActor, type: 'call.answered' | 'call.whispered'): Promise<boolean> {
  return new Promise((resolve) => {
    const subs = [actor.on(type, () => settle(true)), actor.on('call.ended', () => settle(false))];
    function settle(v: boolean) {
      for (const s of subs) s.unsubscribe();
      resolve(v);
    }
  });
}
