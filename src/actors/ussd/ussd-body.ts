/**
 * The body of a USSD SIP request (`application/vnd.3gpp.ussd+xml`, 3GPP TS 24.390 as Restcomm and
 * the Telestax USSD gateway exchange it):
 *
 *   <ussd-data>
 *     <language value="en"/>
 *     <ussd-string value="text"/>
 *     <anyExt><message-type>TYPE</message-type></anyExt>
 *     <error-code value="1"/>            (optional: the session's end)
 *   </ussd-data>
 *
 * A missing message type reads as `unstructuredSSRequest_Response` (a handset's reply), a missing
 * language as `en`. Read with saxes (no DTD, no entity expansion beyond XML's own), written with
 * xmlbuilder2; newlines inside a value are written as character references so they survive
 * attribute-value normalisation (XML 1.0 §3.3.3) at the far end.
 */
import { SaxesParser } from 'saxes';
import { create } from 'xmlbuilder2';

/** The Content-Type of USSD in SIP. */
export const USSD_CONTENT_TYPE = 'application/vnd.3gpp.ussd+xml';

/** MAP USSD operations as the body names them (3GPP TS 29.002 §11.9). */
export const UssdMessageType = {
  /** The handset's first request of a pull session (its dialled string). */
  ProcessRequest: 'processUnstructuredSSRequest_Request',
  /** Our last message of a pull session (in the BYE). */
  ProcessResponse: 'processUnstructuredSSRequest_Response',
  /** A menu: we ask, the handset answers with `RequestResponse`. */
  RequestRequest: 'unstructuredSSRequest_Request',
  RequestResponse: 'unstructuredSSRequest_Response',
  /** A push notification and its acknowledgement. */
  NotifyRequest: 'unstructuredSSNotify_Request',
  NotifyResponse: 'unstructuredSSNotify_Response',
} as const;
export type UssdMessageType = (typeof UssdMessageType)[keyof typeof UssdMessageType];

const TYPES = new Set<string>(Object.values(UssdMessageType));

/** One USSD message as carried in a body. */
export interface UssdData {
  readonly language: string;
  /** The text (`ussd-string`); null when the element is absent. */
  readonly text: string | null;
  readonly type: UssdMessageType;
  /** `error-code` value, when present (our BYE that ends a push session carries 1). */
  readonly errorCode: string | null;
}

/** Bodies larger than this are not USSD (a USSD string is at most 182 characters). */
const MAX_BODY_BYTES = 16 * 1024;

/** Parses a USSD body; null when it is not well-formed `<ussd-data>` XML. Never throws. */
export function parseUssdData(body: string): UssdData | null {
  if (body.trim() === '' || Buffer.byteLength(body) > MAX_BODY_BYTES) return null;
  const parser = new SaxesParser({ xmlns: false });
  let root: string | null = null;
  let language: string | null = null;
  let text: string | null = null;
  let type: string | null = null;
  let errorCode: string | null = null;
  const path: string[] = [];
  let typeText = '';
  let failed = false;
  parser.on('error', () => {
    failed = true;
  });
  parser.on('doctype', () => {
    failed = true;
  });
  parser.on('opentag', (tag) => {
    if (root === null) root = tag.name;
    path.push(tag.name);
    const value = typeof tag.attributes.value === 'string' ? tag.attributes.value : null;
    if (path.length !== 2 && tag.name !== 'message-type') return;
    if (tag.name === 'language') language = value;
    else if (tag.name === 'ussd-string') text = value;
    else if (tag.name === 'error-code') errorCode = value;
    else if (tag.name === 'message-type') typeText = '';
  });
  parser.on('text', (t) => {
    if (path.at(-1) === 'message-type') typeText += t;
  });
  parser.on('closetag', (tag) => {
    path.pop();
    if (tag.name === 'message-type') type = typeText.trim();
  });
  try {
    parser.write(body).close();
  } catch {
    return null;
  }
  if (failed || root !== 'ussd-data') return null;
  const known = type !== null && TYPES.has(type) ? (type as UssdMessageType) : null;
  return {
    language: language ?? 'en',
    text,
    type: known ?? UssdMessageType.RequestResponse,
    errorCode,
  };
}

/** Writes a USSD body. */
export function formatUssdData(data: {
  readonly language?: string;
  readonly text?: string | null;
  readonly type?: UssdMessageType;
  readonly errorCode?: string;
}): string {
  const doc = create({ version: '1.0', encoding: 'UTF-8' }).ele('ussd-data');
  if (data.language !== undefined) doc.ele('language', { value: data.language });
  if (data.text !== undefined && data.text !== null) doc.ele('ussd-string', { value: data.text });
  if (data.type !== undefined) doc.ele('anyExt').ele('message-type').txt(data.type);
  if (data.errorCode !== undefined) doc.ele('error-code', { value: data.errorCode });
  // Compact output: the only line breaks left are inside values, kept as character references.
  return doc
    .end({ prettyPrint: false })
    .replace(/\r/g, '&#13;')
    .replace(/\n/g, '&#10;')
    .replace(/\t/g, '&#9;');
}

/** True for a Content-Type header value that announces USSD. */
export function isUssdContentType(contentType: string): boolean {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase() === USSD_CONTENT_TYPE;
}
