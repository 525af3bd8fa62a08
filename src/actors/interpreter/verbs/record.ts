/**
 * `<Record>`: record the caller and create a Recording (TwiML https://www.twilio.com/docs/voice/twiml/record).
 * The media engine writes the WAV under a fresh `RE…` sid; `createRecording` stores the Recording row.
 * Outcome: request `action` (default: the current document URL, as Twilio) with RecordingUrl,
 * RecordingDuration, RecordingSid and Digits (the key that ended it, when one did); when
 * `recordingStatusCallback` is set it also gets RecordingStatus=completed. Nothing recorded
 * (duration 0) → no Recording, continue with the next verb. A failure writes a Notification and
 * continues.
 *
 * The caller hanging up mid-recording (voicemail) is not a loss: `recordAfterHangupLogic` runs after
 * the verb is stopped, waits for the engine's `recordDone`, stores the Recording and requests
 * `action` with `Digits=hangup` and `CallStatus=completed`, ignoring the document returned (Twilio).
 */
import { fromPromise } from 'xstate';
import { newSid, SidPrefix } from '../../../ids.js';
import type { MediaEvent } from '../../../media/port.js';
import type { VerbInput, VerbOutcome } from '../interpreter.types.js';
import { type RecordAttrs, recordAttrs } from '../markup/index.js';
import { type CallStatusParam, callStatusParam, requestParams, resolveUrl } from '../params.js';
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

type RecordDone = Extract<MediaEvent, { type: 'media.recordDone' }>;

/**
 * Stores a finished recording and fires its status callback; returns the action request, or null
 * when there is nothing to report (empty or failed).
 */
async function completeRecording(
  services: InterpreterServices,
  input: VerbInput,
  done: RecordDone,
  status: CallStatusParam,
  digits: string,
): Promise<Extract<VerbOutcome, { kind: 'fetch' }> | null> {
  const a = attrsOf<RecordAttrs>(input);
  if (done.durationSeconds <= 0) return null;
  let recording: Awaited<ReturnType<InterpreterServices['createRecording']>>;
  try {
    recording = await services.createRecording({
      recordingSid: done.recordingSid,
      accountSid: input.call.accountSid,
      callSid: input.call.callSid,
      durationSeconds: done.durationSeconds,
    });
  } catch (err) {
    notifyVerbFailure(services, input, `recording could not be stored: ${errorText(err)}`);
    return null;
  }
  const params: Array<readonly [string, string]> = [
    ['RecordingUrl', recording.url],
    ['RecordingDuration', String(Math.round(recording.durationSeconds))],
    ['RecordingSid', recording.sid],
  ];
  if (digits !== '') params.push(['Digits', digits]);
  const cb =
    a.recordingStatusCallback === null ? null : resolveUrl(a.recordingStatusCallback, input.documentUrl);
  if (cb !== null) {
    // Fire and forget: its failures are Notifications written by the WebhookClient.
    void services
      .fetch({
        url: cb,
        method: a.recordingStatusCallbackMethod,
        params: [
          ...requestParams(input.call, status),
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
  const url = resolveUrl(a.action ?? input.documentUrl, input.documentUrl) ?? input.documentUrl;
  return { kind: 'fetch', url, method: a.method, params };
}

const isRecordEnd = (opId: string) => (e: MediaEvent) =>
  (e.type === 'media.recordDone' || e.type === 'media.recordFailed') && e.opId === opId ? e : null;

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
        isRecordEnd(opId),
      );
      if (done === null) return HANGUP;
      if (done.type === 'media.recordFailed') {
        notifyVerbFailure(services, input, `recording failed: ${done.message}`);
        return NEXT;
      }
      return (await completeRecording(services, input, done, callStatusParam(true), done.digits)) ?? NEXT;
    }),
};

/**
 * After the caller hung up during `<Record>`: waits for the stopped recording's `recordDone` (same
 * opId), stores it and requests `action` (Digits=hangup, CallStatus=completed); the response is
 * ignored. Resolves true when a request was made.
 */
export function recordAfterHangupLogic(services: InterpreterServices) {
  return fromPromise<boolean, VerbInput>(async ({ input, signal }) => {
    const endpointId = input.call.endpointId;
    const done = await new Promise<RecordDone | null>((resolve) => {
      const off = services.mediaEvents.on(endpointId, (e) => {
        const end = isRecordEnd(input.opId)(e);
        if (end || e.type === 'media.endpointLost') {
          off();
          resolve(end?.type === 'media.recordDone' ? end : null);
        }
      });
      signal.addEventListener('abort', () => {
        off();
        resolve(null);
      });
    });
    if (done === null) return false;
    const request = await completeRecording(services, input, done, 'completed', 'hangup');
    if (request === null) return false;
    await services.fetch({
      url: request.url,
      method: request.method,
      params: requestParams(input.call, 'completed', request.params),
      fallback: null,
      accountSid: input.call.accountSid,
      callSid: input.call.callSid,
    });
    return true;
  });
}
