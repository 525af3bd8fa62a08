/**
 * One error type and one catalogue for the whole service. HTTP routes render an AppError as the
 * error body (see src/http/errors.ts); SIP and SMPP adapters carry their status as data in their own
 * error types (SipError, SmppError) and never match on message text.
 *
 * Codes follow Twilio's numbering where one exists, so client libraries recognise them.
 */

export interface ErrorSpec {
  readonly code: number;
  readonly status: number;
  readonly message: string;
}

/** The catalogue: one entry per distinct failure a client can see. Documented in docs/errors.md. */
export const ErrorCatalog = {
  InvalidParameter: { code: 21100, status: 400, message: 'Invalid parameter' },
  MissingParameter: { code: 21101, status: 400, message: 'Missing required parameter' },
  MalformedBody: { code: 21102, status: 400, message: 'Malformed request body' },
  Unauthenticated: { code: 20003, status: 401, message: 'Authentication required' },
  AccountNotActive: { code: 20005, status: 403, message: 'Account is not active' },
  Forbidden: { code: 20403, status: 403, message: 'Forbidden' },
  NotFound: { code: 20404, status: 404, message: 'The requested resource was not found' },
  MethodNotAllowed: { code: 20405, status: 405, message: 'Method not allowed' },
  Conflict: { code: 20409, status: 409, message: 'Conflict with the current state of the resource' },
  AlreadyExists: { code: 20410, status: 409, message: 'A resource with this identity already exists' },
  PreconditionFailed: { code: 20412, status: 412, message: 'Precondition failed' },
  PayloadTooLarge: { code: 20413, status: 413, message: 'Request body too large' },
  UnsupportedMediaType: { code: 20415, status: 415, message: 'Unsupported media type' },
  TooManyRequests: { code: 20429, status: 429, message: 'Too many requests' },
  Internal: { code: 20500, status: 500, message: 'Internal server error' },
  Unavailable: { code: 20503, status: 503, message: 'Service temporarily unavailable' },
  NoNumberAvailable: { code: 21452, status: 400, message: 'No phone number matches the request' },
  NumberAlreadyOwned: { code: 21453, status: 409, message: 'The account already owns this phone number' },
  CallerIdNotVerified: {
    code: 21210,
    status: 400,
    message: "The 'From' number is neither a number of this account nor one of its outgoing caller ids",
  },
  CallerIdExists: {
    code: 21450,
    status: 409,
    message: 'The number is already an outgoing caller id of this account',
  },
  ClosedAccount: { code: 20006, status: 409, message: 'A closed account cannot be modified' },
  RangeNotSatisfiable: { code: 20416, status: 416, message: 'Requested range not satisfiable' },
  // --- Messaging: SMS and email ---
  SmsBodyRequired: { code: 21602, status: 400, message: 'Message body is required' },
  SmsInvalidTo: { code: 21211, status: 400, message: "Invalid 'To' address" },
  SmsFromNotOwned: {
    code: 21606,
    status: 400,
    message: "The 'From' number is not an SMS-capable number or short code of this account",
  },
  SmsBodyTooLong: { code: 21617, status: 400, message: 'Message body exceeds the 1600 character limit' },
  SmsNotConfigured: { code: 21612, status: 503, message: 'No SMSC is configured (SMPP_URL)' },
  EmailNotConfigured: { code: 21710, status: 503, message: 'Email is not configured (SMTP_URL)' },
  EmailSendFailed: { code: 21711, status: 502, message: 'The SMTP server did not accept the email' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorName = keyof typeof ErrorCatalog;

/** Where the server serves its error reference (one anchor per code, `#20404`). */
export const ERROR_REFERENCE_PATH = '/docs/errors';

/**
 * The `more_info` link of an error body or Notification: the server's own error reference, absolute
 * under PUBLIC_URL so it answers wherever the client reads it. The one place that builds the link.
 */
export function moreInfoUrl(publicUrl: string, code: number): string {
  return `${publicUrl.replace(/\/+$/, '')}${ERROR_REFERENCE_PATH}#${code}`;
}

export class AppError extends Error {
  override readonly name = 'AppError';
  readonly code: number;
  readonly status: number;
  /** Extra response headers (Allow, Retry-After, WWW-Authenticate...). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    kind: ErrorName | ErrorSpec,
    detail?: string,
    options: { cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    const spec: ErrorSpec = typeof kind === 'string' ? ErrorCatalog[kind] : kind;
    super(detail ?? spec.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = spec.code;
    this.status = spec.status;
    this.headers = options.headers ?? {};
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
