/**
 * What runs each call: its markup interpreter (an actor of its own: it outlives the call's end to
 * finish action callbacks and recordings) or the bridge of a client calling a client. The call actor
 * starts, redirects and ends its app through `CallEffects`; the app's end comes back to it as
 * `app.done`. Live handles stay here, by call sid.
 */
import type { AnyActorRef } from 'xstate';
import type { Logger } from '../../logger.js';
import type { InterpreterInput } from '../interpreter/interpreter.types.js';
import type { CallApp, CallContext, CallEmitted, CallEvent, MarkupTarget } from './call.types.js';
import type { AppRunner } from './live-effects.js';
import { transferParams } from './transfer.js';

interface Running {
  interpreter: AnyActorRef | null;
  readonly abort: AbortController | null;
  /** A redirect that came before the interpreter started. */
  redirect?: MarkupTarget;
  /** The call ended: its app's end is no longer news to it. */
  ended: boolean;
}

export interface CallAppsDeps {
  /** Starts a markup interpreter (the composition root owns its machine). */
  readonly startInterpreter: (input: InterpreterInput) => AnyActorRef;
  /** Bridges an inbound call to a registered client; settles when the bridge is over. */
  readonly bridgeClient: (sid: string, login: string, signal: AbortSignal) => Promise<void>;
  /** Publishes on the call's event stream (the interpreter's verb events). */
  readonly publish: (event: CallEmitted) => void;
  readonly logger: Logger;
}

export class CallApps implements AppRunner {
  private readonly running = new Map<string, Running>();

  constructor(private readonly deps: CallAppsDeps) {}

  start(call: CallContext, app: CallApp, send: (event: CallEvent) => void): void {
    const sid = call.origin.sid;
    const previous = this.running.get(sid);
    if (previous) {
      this.running.delete(sid);
      previous.interpreter?.stop();
      previous.abort?.abort();
    }
    // A failed app hangs the call up; one that finished leaves it to the call (a whisper's bridge).
    const done = (entry: Running, failed = false) => {
      if (this.running.get(sid) !== entry) return;
      this.running.delete(sid);
      if (!entry.ended) send({ type: failed ? 'app.hangup' : 'app.done', at: Date.now() });
    };
    if (app.kind === 'client') {
      const entry: Running = { interpreter: null, abort: new AbortController(), ended: false };
      this.running.set(sid, entry);
      void this.deps
        .bridgeClient(sid, app.login, entry.abort!.signal)
        .catch((err) => this.deps.logger.debug({ err, callSid: sid }, 'client bridge ended'))
        .finally(() => done(entry));
      return;
    }
    const entry: Running = { interpreter: null, abort: null, ended: false };
    this.running.set(sid, entry);
    // Started after the call actor's transition, not inside its action: an actor is created outside
    // another actor's action (XState's rule), and the call's state is settled when the markup starts.
    queueMicrotask(() => {
      if (this.running.get(sid) !== entry || entry.ended) return;
      const interpreter = this.startInterpreter(call, entry.redirect ? { ...app, ...entry.redirect } : app);
      entry.interpreter = interpreter;
      interpreter.on('verb.started', (e: { verb: string; seq: number }) =>
        this.deps.publish({ type: 'verb.started', call, verb: e.verb, seq: e.seq, at: Date.now() }),
      );
      interpreter.on('verb.finished', (e: { verb: string; seq: number; outcome: string }) =>
        this.deps.publish({
          type: 'verb.finished',
          call,
          verb: e.verb,
          seq: e.seq,
          outcome: e.outcome,
          at: Date.now(),
        }),
      );
      interpreter.subscribe({
        complete: () => done(entry),
        error: (err) => {
          this.deps.logger.error({ err, callSid: sid }, 'interpreter failed');
          done(entry, true);
        },
      });
    });
  }

  private startInterpreter(call: CallContext, app: Extract<CallApp, { kind: 'markup' }>): AnyActorRef {
    const o = call.origin;
    return this.deps.startInterpreter({
      call: {
        callSid: o.sid,
        accountSid: o.accountSid,
        from: o.from,
        to: o.to,
        direction: o.direction,
        endpointId: o.sid,
        apiVersion: o.apiVersion,
        parentCallSid: o.parentCallSid,
        forwardedFrom: o.forwardedFrom,
        callerName: o.callerName,
        ...(call.transfer ? { extraParams: transferParams(call.transfer) } : {}),
      },
      url: app.url,
      method: app.method,
      fallbackUrl: app.fallbackUrl,
      fallbackMethod: app.fallbackMethod,
      answered: app.answered,
      ...(app.whisper ? { whisper: true } : {}),
    });
  }

  redirect(sid: string, to: MarkupTarget): boolean {
    const entry = this.running.get(sid);
    if (!entry || entry.abort) return false;
    if (entry.interpreter) entry.interpreter.send({ type: 'http.redirect', ...to });
    else entry.redirect = to;
    return true;
  }

  end(sid: string): void {
    const entry = this.running.get(sid);
    if (!entry) return;
    entry.ended = true;
    // The interpreter winds down on its own (Dial action, a recording being stored), then completes.
    entry.interpreter?.send({ type: 'call.ended' });
    entry.abort?.abort();
  }

  /** Stops every app at once (shutdown: no callbacks). */
  stopAll(): void {
    for (const entry of this.running.values()) {
      entry.ended = true;
      entry.interpreter?.stop();
      entry.abort?.abort();
    }
    this.running.clear();
  }
}
