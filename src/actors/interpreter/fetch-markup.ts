/**
 * The markup fetch actor: request a document through the WebhookClient (which retries and falls back
 * on network and HTTP failures, writing a Notification per failed attempt), check its Content-Type,
 * parse it safely, and write the parser's diagnostics as Notifications.
 *
 * Invalid markup from the primary URL (12100 parse failure, 11750 too large, 12300 Content-Type) is
 * treated like a failed request, as Twilio does: Notification, then the fallback URL if there is one.
 */
import { fromCallback } from 'xstate';
import type { WebhookSuccess } from '../../webhooks/index.js';
import {
  type CallInfo,
  InterpreterErrorCode,
  MAX_DIAGNOSTIC_NOTIFICATIONS,
  type PendingFetch,
} from './interpreter.types.js';
import { type ParseResult, parseMarkup, type VerbNode } from './markup/index.js';
import { callStatusParam, requestParams } from './params.js';
import type { InterpreterServices, MarkupRequest } from './services.js';

/** Input of the fetch actor: the request to make and the call it is made for. */
export interface FetchMarkupInput {
  readonly request: PendingFetch;
  readonly call: CallInfo;
  readonly answered: boolean;
}

/** A usable program and the URL it came from, or a failure already reported as Notifications. */
export type FetchMarkupOutput =
  | { readonly ok: true; readonly program: readonly VerbNode[]; readonly documentUrl: string }
  | { readonly ok: false };

/** Media types accepted for markup (Twilio accepts XML, and text/html or text/plain holding XML). */
export function isMarkupContentType(contentType: string | null): boolean {
  if (contentType === null) return true;
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return (
    type === '' ||
    type === 'text/xml' ||
    type === 'application/xml' ||
    type === 'text/html' ||
    type === 'text/plain' ||
    type.endsWith('+xml')
  );
}

type Parsed = { ok: true; program: readonly VerbNode[] } | { ok: false };

/** Documents up to this size are remembered parsed (an app serves the same few bodies to every call). */
const MEMO_MAX_BODY = 4096;
/** Parsed documents remembered (bounded: at most MEMO_SIZE × MEMO_MAX_BODY of text). */
const MEMO_SIZE = 256;
const memo = new Map<string, ParseResult>();

/**
 * The voice parse of a document: a pure function of its text, so a small body already parsed is not
 * parsed again (the result is read-only data: programs are never changed in place).
 */
function parseVoice(body: string): ParseResult {
  if (body.length > MEMO_MAX_BODY) return parseMarkup(body, { mode: 'voice' });
  const known = memo.get(body);
  if (known) return known;
  const parsed = parseMarkup(body, { mode: 'voice' });
  if (memo.size >= MEMO_SIZE) memo.delete(memo.keys().next().value as string);
  memo.set(body, parsed);
  return parsed;
}

function parseResponse(
  services: InterpreterServices,
  req: MarkupRequest,
  res: WebhookSuccess,
  fallbackFollows: boolean,
): Parsed {
  const base = {
    accountSid: req.accountSid,
    callSid: req.callSid,
    requestUrl: res.url,
    requestMethod: res.method,
    requestVariables: req.params,
  };
  if (!isMarkupContentType(res.contentType)) {
    services.notify({
      ...base,
      errorCode: InterpreterErrorCode.InvalidContentType,
      log: fallbackFollows ? 1 : 0,
      messageText: `markup response has Content-Type ${JSON.stringify(res.contentType)}`,
      responseHeaders: res.headers,
      responseBody: res.body,
    });
    return { ok: false };
  }
  const parsed = parseVoice(res.body);
  if (!parsed.ok) {
    services.notify({
      ...base,
      errorCode: parsed.error.code,
      log: fallbackFollows ? 1 : 0,
      messageText: `invalid markup (${parsed.error.reason}): ${parsed.error.message}`,
      responseHeaders: res.headers,
      responseBody: res.body,
    });
    return { ok: false };
  }
  const { diagnostics } = parsed;
  for (const d of diagnostics.slice(0, MAX_DIAGNOSTIC_NOTIFICATIONS)) {
    services.notify({
      ...base,
      errorCode: d.code,
      log: 1,
      messageText: `${d.message}${d.line === null ? '' : ` (line ${d.line})`}`,
    });
  }
  if (diagnostics.length > MAX_DIAGNOSTIC_NOTIFICATIONS) {
    services.notify({
      ...base,
      errorCode: InterpreterErrorCode.SchemaWarning,
      log: 1,
      messageText: `${diagnostics.length - MAX_DIAGNOSTIC_NOTIFICATIONS} more markup warnings not recorded`,
    });
  }
  return { ok: true, program: parsed.program };
}

/**
 * What the fetch actor sends its interpreter: the document (or a failure already reported as
 * Notifications), or the error that escaped it.
 */
export type MarkupFetchEvent =
  | { readonly type: 'markup.fetched'; readonly output: FetchMarkupOutput }
  | { readonly type: 'markup.fetchFailed'; readonly error: unknown };

/**
 * Actor logic of the `fetching` state: a callback that runs the fetch and sends its outcome. The
 * request is not cancelled when the actor stops (the WebhookClient takes no signal), so an
 * AbortController would buy nothing; a stopped actor's late outcome is dropped by XState, and a
 * restored interpreter starts the fetch again.
 */
export function fetchMarkupLogic(services: InterpreterServices) {
  return fromCallback<MarkupFetchEvent, FetchMarkupInput>(({ input, sendBack }) => {
    fetchMarkup(services, input).then(
      (output) => sendBack({ type: 'markup.fetched', output }),
      (error: unknown) => sendBack({ type: 'markup.fetchFailed', error }),
    );
  });
}

/** Fetches, checks and parses a document, falling back as Twilio does. */
async function fetchMarkup(
  services: InterpreterServices,
  input: FetchMarkupInput,
): Promise<FetchMarkupOutput> {
  const { request, call } = input;
  const req: MarkupRequest = {
    url: request.url,
    method: request.method,
    params: requestParams(call, callStatusParam(input.answered), request.params),
    fallback: request.fallback,
    accountSid: call.accountSid,
    callSid: call.callSid,
  };
  const res = await services.fetch(req);
  // Network and HTTP failures: the WebhookClient already tried the fallback and wrote Notifications.
  if (!res.ok) return { ok: false };
  const fallback = res.usedFallback ? null : request.fallback;
  const first = parseResponse(services, req, res, fallback !== null);
  if (first.ok) {
    return {
      ok: true,
      program: first.program,
      documentUrl: res.usedFallback ? request.fallback!.url : req.url,
    };
  }
  if (fallback === null) return { ok: false };
  const second = await services.fetch({
    ...req,
    url: fallback.url,
    method: fallback.method,
    fallback: null,
  });
  if (!second.ok) return { ok: false };
  const parsed = parseResponse(services, req, second, false);
  return parsed.ok ? { ok: true, program: parsed.program, documentUrl: fallback.url } : { ok: false };
}
