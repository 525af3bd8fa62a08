/**
 * Shared pieces of the verb actors: the verb definition shape, media operations awaited through the
 * per-endpoint event stream, and Notification helpers. A media operation subscribes before it sends
 * its command (the port may answer synchronously) and, when the verb actor is stopped (its `signal`
 * aborts: REST redirect, call ended), stops the endpoint's operation so nothing keeps playing.
 */
import { type CallbackActorLogic, fromPromise, type PromiseActorLogic } from 'xstate';
import type { MediaEvent, PlayOptions, PlaySource } from '../../../media/port.js';
import {
  InterpreterErrorCode,
  type VerbDone,
  type VerbInput,
  type VerbOutcome,
} from '../interpreter.types.js';
import type { AttrMap, AttrValue } from '../markup/index.js';
import type { InterpreterServices } from '../services.js';

/**
 * The actor of a verb: a promise whose output is the outcome, or, for a verb that only waits on a
 * timer (`<Pause>`), a callback that sends `verb.done` with it (no promise or AbortController).
 */
export type VerbLogic = PromiseActorLogic<VerbOutcome, VerbInput> | CallbackActorLogic<VerbDone, VerbInput>;

/** A verb: its markup element, attribute schema and actor logic (a promise unless `L` says otherwise). */
export interface VerbDefinition<L extends VerbLogic = PromiseActorLogic<VerbOutcome, VerbInput>> {
  /** Element name, as in the markup. */
  readonly name: string;
  /** Attribute schema (from `markup/verbs/<verb>.ts`). */
  readonly attrs: AttrMap;
  /** Media verbs need an answered call (the interpreter answers first) and reset the redirect chain. */
  readonly media: boolean;
  readonly logic: (services: InterpreterServices) => L;
  /**
   * For a verb decided by its node alone (nothing to wait for, no side effect): its outcome. The
   * interpreter records it at once instead of starting an actor whose promise only resolves it;
   * `logic` is then this outcome as an actor (the same verb where an actor is wanted).
   */
  readonly outcome?: (input: VerbInput) => VerbOutcome;
}

/** The definition of a verb decided by its node alone (see `VerbDefinition.outcome`). */
export function immediateVerb(
  def: Omit<VerbDefinition, 'logic' | 'outcome'> & { outcome: (input: VerbInput) => VerbOutcome },
): VerbDefinition {
  return {
    ...def,
    logic: () => fromPromise<VerbOutcome, VerbInput>(async ({ input }) => def.outcome(input)),
  };
}

/** Continue with the next verb. */
export const NEXT: VerbOutcome = { kind: 'next' };
/** End the call (also used when the media endpoint is gone). */
export const HANGUP: VerbOutcome = { kind: 'hangup' };

/** The validated attributes of a node, typed by the verb's schema (the parser guarantees the shape). */
export function attrsOf<A>(input: VerbInput): A {
  return input.node.attrs as Readonly<Record<string, AttrValue>> as A;
}

/** The error a verb's promise rejects with when its actor is stopped (the result is ignored). */
export function aborted(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('verb stopped');
}

/**
 * Starts a media operation and waits for the event that ends it (`match` returns it), or null when
 * the endpoint is lost or released. On abort, stops the endpoint's operation and rejects.
 */
export function awaitMedia<T extends MediaEvent>(
  services: Pick<InterpreterServices, 'media' | 'mediaEvents'>,
  endpointId: string,
  signal: AbortSignal,
  start: () => void,
  match: (event: MediaEvent) => T | null,
): Promise<T | null> {
  return new Promise<T | null>((resolve, reject) => {
    if (signal.aborted) {
      reject(aborted(signal));
      return;
    }
    let off: () => void = () => {};
    const finish = () => {
      off();
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      finish();
      services.media.stop(endpointId);
      reject(aborted(signal));
    };
    off = services.mediaEvents.on(endpointId, (event) => {
      if (event.type === 'media.endpointLost' || event.type === 'media.released') {
        finish();
        resolve(null);
        return;
      }
      const done = match(event);
      if (done) {
        finish();
        resolve(done);
      }
    });
    signal.addEventListener('abort', onAbort, { once: true });
    start();
  });
}

/** How a play ended, from the interpreter's point of view. */
export type PlayResult = 'completed' | 'interrupted' | 'failed' | 'lost';

/** Plays `source` on the call's endpoint and waits for its outcome; a failure writes a Notification. */
export async function playOn(
  services: InterpreterServices,
  input: VerbInput,
  signal: AbortSignal,
  opId: string,
  source: PlaySource,
  opts: PlayOptions,
): Promise<PlayResult> {
  const endpointId = input.call.endpointId;
  const ev = await awaitMedia(
    services,
    endpointId,
    signal,
    () => services.media.play(endpointId, opId, source, opts),
    (e) => ((e.type === 'media.playDone' || e.type === 'media.playFailed') && e.opId === opId ? e : null),
  );
  if (ev === null) return 'lost';
  if (ev.type === 'media.playFailed') {
    services.notify({
      accountSid: input.call.accountSid,
      callSid: input.call.callSid,
      errorCode:
        ev.reason === 'fetch-failed'
          ? InterpreterErrorCode.RetrievalFailure
          : ev.reason === 'not-audio'
            ? InterpreterErrorCode.InvalidContentType
            : ev.reason === 'too-large'
              ? InterpreterErrorCode.TooLarge
              : InterpreterErrorCode.InternalFailure,
      log: 1,
      messageText: `<${input.node.verb}> could not play (${ev.reason}): ${ev.message}`,
      requestUrl: source.kind === 'url' ? source.url : null,
      requestMethod: source.kind === 'url' ? 'GET' : null,
    });
    return 'failed';
  }
  return ev.reason === 'interrupted' ? 'interrupted' : 'completed';
}

/** Writes a 12400 Notification for a verb that failed inside the runtime. */
export function notifyVerbFailure(services: InterpreterServices, input: VerbInput, what: string): void {
  services.notify({
    accountSid: input.call.accountSid,
    callSid: input.call.callSid,
    errorCode: InterpreterErrorCode.InternalFailure,
    log: 1,
    messageText: `<${input.node.verb}> ${what}`,
  });
}

/** Default `sleep`: a timer that rejects when `signal` aborts. */
export function timerSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(aborted(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(t);
      reject(aborted(signal));
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Message of an unknown thrown value. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
