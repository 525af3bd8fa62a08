/** `<Record>`: record the caller; creates a Recording. TwiML https://www.twilio.com/docs/voice/twiml/record */
import type { AttrsOf, VerbSchema } from '../schema.js';
import { Common } from '../schema.js';

export const recordAttrs = {
  action: Common.action,
  method: Common.method,
  /** Seconds of silence that end the recording; 0 = no silence detection. */
  timeout: { type: 'integer', default: 5, min: 0, max: 600 },
  /** Keys that end the recording; '' = none. */
  finishOnKey: { type: 'keys', default: '1234567890*#', chars: '0123456789*#', maxLength: 12 },
  /** Maximum length in seconds. */
  maxLength: { type: 'integer', default: 3600, min: 1, max: 14400 },
  playBeep: { type: 'boolean', default: true },
  trim: { type: 'enum', values: ['trim-silence', 'do-not-trim'], default: 'trim-silence' },
  recordingStatusCallback: { type: 'url', default: null },
  recordingStatusCallbackMethod: Common.method,
} as const;

export type RecordAttrs = AttrsOf<typeof recordAttrs>;

export const record: VerbSchema = { name: 'Record', attrs: recordAttrs, text: null, children: [] };
