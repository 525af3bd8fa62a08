/**
 * `<Gather>`: play the nested Say/Play/Pause prompts, then collect DTMF (TwiML
 * https://www.twilio.com/docs/voice/twiml/gather). A key pressed during a prompt interrupts the
 * prompts and counts as input (the media engine buffers digits for the next collect).
 *
 * Outcome, as Twilio: digits collected → request `action` (default: the current document URL) with
 * `Digits` (and `FinishedOnKey`); no input (timeout, or finishOnKey alone) → continue with the next verb.
 */
import { fromPromise } from 'xstate';
import type { PlaySource } from '../../../media/port.js';
import type { VerbInput, VerbOutcome } from '../interpreter.types.js';
import {
  type GatherAttrs,
  gatherAttrs,
  type PauseAttrs,
  type PlayAttrs,
  type SayAttrs,
  type VerbNode,
} from '../markup/index.js';
import { resolveUrl } from '../params.js';
import type { InterpreterServices } from '../services.js';
import { attrsOf, awaitMedia, HANGUP, NEXT, playOn, type VerbDefinition } from './support.js';

export { type GatherAttrs, gatherAttrs };

/** What a nested prompt plays, or null when it plays nothing (e.g. `<Play digits>` inside Gather). */
function promptSource(node: VerbNode, documentUrl: string): { source: PlaySource; loop: number } | null {
  switch (node.verb) {
    case 'Say': {
      const a = node.attrs as Readonly<Record<string, unknown>> as SayAttrs;
      return {
        source: { kind: 'tts', text: node.text ?? '', voice: a.voice, language: a.language },
        loop: a.loop,
      };
    }
    case 'Play': {
      const a = node.attrs as Readonly<Record<string, unknown>> as PlayAttrs;
      const url = node.text === null ? null : resolveUrl(node.text, documentUrl);
      return url === null ? null : { source: { kind: 'url', url }, loop: a.loop };
    }
    case 'Pause': {
      const a = node.attrs as Readonly<Record<string, unknown>> as PauseAttrs;
      return a.length > 0 ? { source: { kind: 'silence', ms: a.length * 1000 }, loop: 1 } : null;
    }
    default:
      return null;
  }
}

/** The `<Gather>` verb. */
export const gatherVerb: VerbDefinition = {
  name: 'Gather',
  attrs: gatherAttrs,
  media: true,
  logic: (services: InterpreterServices) =>
    fromPromise<VerbOutcome, VerbInput>(async ({ input, signal }) => {
      const a = attrsOf<GatherAttrs>(input);
      const endpointId = input.call.endpointId;
      let k = 0;
      for (const child of input.node.children) {
        const prompt = promptSource(child, input.documentUrl);
        if (prompt === null) continue;
        k += 1;
        const r = await playOn(services, input, signal, `${input.opId}.${k}`, prompt.source, {
          loop: prompt.loop,
          interruptOnDtmf: true,
        });
        if (r === 'lost') return HANGUP;
        if (r === 'interrupted') break;
      }
      const opId = `${input.opId}.collect`;
      const done = await awaitMedia(
        services,
        endpointId,
        signal,
        () =>
          services.media.collect(endpointId, opId, {
            timeoutSeconds: a.timeout,
            finishOnKey: a.finishOnKey,
            ...(a.numDigits === null ? {} : { numDigits: a.numDigits }),
          }),
        (e) => (e.type === 'media.collectDone' && e.opId === opId ? e : null),
      );
      if (done === null) return HANGUP;
      if (done.digits === '') return NEXT;
      const url = resolveUrl(a.action ?? input.documentUrl, input.documentUrl) ?? input.documentUrl;
      return {
        kind: 'fetch',
        url,
        method: a.method,
        params: [
          ['Digits', done.digits],
          ['FinishedOnKey', done.reason === 'finish-key' ? a.finishOnKey : ''],
        ],
      };
    }),
};
