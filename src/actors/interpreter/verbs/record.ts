/**
 * `<Record>`: record the caller and create a Recording (TwiML https://www.twilio.com/docs/voice/twiml/record).
 * The media engine writes the WAV under a fresh `RE…` sid; `createRecording` stores the Recording row.
 * Outcome: request `action` (default: the current document URL, as Twilio) with RecordingUrl,
 * RecordingDuration, RecordingSid and Digits (the key that ended it, when one did); when
 * `recordingStatusCallback` is set it also gets RecordingStatus=completed. Nothing recorded
 * (duration 0) → no Recording, continue with the next verb. A failure writes a Notification and
 * continues.
 */
import { fromPromise } from 'xstate';
import { newSid, SidPrefix } from '../../../ids.js';
import type { VerbInput, VerbOutcome } from '../interpreter.types.js';
import { type RecordAttrs, recordAttrs } from '../markup/index.js';
import { requestParams, resolveUrl } from '../params.js';
import type { InterpreterServices } from '../services.js';
import {
  attrsOf,
  awaitMedia,
  errorText,
  HANGUP,
  NEXT,
  notifyVerbFailure,
  type VerbDefinition,
} from './support.js';

export { type RecordAttrs, recordAttrs };

/** The `<Record>` verb. */
export const recordVerb: VerbDefinition = {
  name: 'Record',
  attrs: recordAttrs,
  media: true,
  logic: (services: InterpreterServices) =>
    fromPromise<VerbOutcome, VerbInput>(async ({ input, signal }) => {
      const a = attrsOf<RecordAttrs>(input);
      const endpointId = input.call.endpointId;
      const recordingSid = newSid(SidPrefix.Recording);
      const opId = input.opId;
      const done = await awaitMedia(
        services,
        endpointId,
        signal,
        () =>
          services.media.record(endpointId, opId, {
            recordingSid,
            maxLengthSeconds: a.maxLength,
            silenceTimeoutSeconds: a.timeout,
            finishOnKey: a.finishOnKey,
            playBeep: a.playBeep,
          }),
        (e) =>
          (e.type === 'media.recordDone' || e.type === 'media.recordFailed') && e.opId === opId ? e : null,
      );
      if (done === null) return HANGUP;
      if (done.type === 'media.recordFailed') {
        notifyVerbFailure(services, input, `recording failed: ${done.message}`);
        return NEXT;
      }
      if (done.durationSeconds <= 0) return NEXT;
      let recording: Awaited<ReturnType<InterpreterServices['createRecording']>>;
      try {
        recording = await services.createRecording({
          recordingSid,
          accountSid: input.call.accountSid,
          callSid: input.call.callSid,
          durationSeconds: done.durationSeconds,
        });
      } catch (err) {
        notifyVerbFailure(services, input, `recording could not be stored: ${errorText(err)}`);
        return NEXT;
      }
      const duration = String(Math.round(recording.durationSeconds));
      const params: Array<readonly [string, string]> = [
        ['RecordingUrl', recording.url],
        ['RecordingDuration', duration],
        ['RecordingSid', recording.sid],
      ];
      if (done.digits !== '') params.push(['Digits', done.digits]);
      if (a.recordingStatusCallback !== null) {
        const cb = resolveUrl(a.recordingStatusCallback, input.documentUrl);
        if (cb !== null) {
          // Fire and forget: its failures are Notifications written by the WebhookClient.
          void services
            .fetch({
              url: cb,
              method: a.recordingStatusCallbackMethod,
              params: [
                ...requestParams(input.call, input.answered),
                ...params,
                ['RecordingStatus', 'completed'],
                ['RecordingChannels', '1'],
                ['RecordingSource', 'RecordVerb'],
              ],
              fallback: null,
              accountSid: input.call.accountSid,
              callSid: input.call.callSid,
            })
            .catch(() => {});
        }
      }
      const url = resolveUrl(a.action ?? input.documentUrl, input.documentUrl) ?? input.documentUrl;
      return { kind: 'fetch', url, method: a.method, params };
    }),
};
