/**
 * One error body, in JSON and XML (Twilio's RestException shape):
 *   JSON {"code":20404,"message":"…","more_info":"…","status":404}
 *   XML  <ServiceResponse><RestException><Code/><Message/><MoreInfo/><Status/></RestException></ServiceResponse>
 */
import type { NextFunction, Request, Response } from 'express';
import { AppError, moreInfoUrl } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Notifier } from '../notifications/notifier.js';
import { isStoreInputError } from '../store/store-errors.js';
import { formatOf, state } from './context.js';
import { send } from './render.js';

/** Maps body-parser and other framework errors onto the catalogue. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  // Text the store cannot hold (NUL, unpaired surrogate) is the client's input, never a 500.
  if (isStoreInputError(err)) return new AppError('InvalidParameter', err.message, { cause: err });
  const e = err as { type?: string; status?: number; statusCode?: number; message?: string };
  switch (e?.type) {
    case 'entity.too.large':
      return new AppError('PayloadTooLarge', 'Request body exceeds the size limit', { cause: err });
    case 'entity.parse.failed':
      return new AppError('MalformedBody', 'Request body could not be parsed', { cause: err });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('UnsupportedMediaType', e.message, { cause: err });
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new AppError('MalformedBody', 'Request body was incomplete', { cause: err });
  }
  const status = e?.status ?? e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new AppError('MalformedBody', 'Bad request', { cause: err });
  }
  return new AppError('Internal', undefined, { cause: err });
}

/** `publicUrl` '' gives a link relative to this server (tests that mount the handler alone). */
export function errorBody(err: AppError, publicUrl = '') {
  return {
    Code: err.code,
    Message: err.message,
    MoreInfo: moreInfoUrl(publicUrl, err.code),
    Status: err.status,
  };
}

/** Refused writes inside an account's scope are recorded as warning Notifications (spec §Notification). */
const NOTIFIED_STATUSES = new Set([400, 409, 412, 413, 415]);

export function errorHandler(logger: Logger, notifier?: Notifier, publicUrl = '') {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const appErr = toAppError(err);
    if (appErr.status >= 500)
      logger.error({ err, method: req.method, url: req.originalUrl }, 'request failed');
    const account = state(res).account;
    const form = state(res).form;
    if (notifier && account && req.method !== 'GET' && NOTIFIED_STATUSES.has(appErr.status)) {
      void notifier.notify({
        accountSid: account.sid,
        errorCode: appErr.code,
        log: 1,
        messageText: appErr.message,
        requestUrl: req.originalUrl,
        requestMethod: req.method,
        requestVariables: form ? [...form.entries()].map(([k, v]) => [k, v.join(',')] as const) : null,
      });
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [k, v] of Object.entries(appErr.headers)) res.setHeader(k, v);
    send(res, formatOf(res), 'RestException', errorBody(appErr, publicUrl), appErr.status);
  };
}

export function notFound(req: Request, _res: Response, next: NextFunction): void {
  next(new AppError('NotFound', `No resource at ${req.method} ${req.originalUrl.split('?')[0]}`));
}
