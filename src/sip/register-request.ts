/**
 * A REGISTER as the registrar reads it, taken from the text the checks have validated
 * (validate.ts) instead of from the `sip` package's parse: registrations are the stack's busiest
 * requests, and parsing each of their headers into objects, then writing the answer back from those
 * objects, cost about as much as everything the registrar itself does. The answers are written from
 * the same text (wire-response.ts). It exposes only what the registrar and the stack read.
 */
import { credentialsOf, type DigestCredentials } from './digest.js';
import type { Flow } from './flow.js';
import type { RequestFacts } from './request-checks.js';
import { contactExpires, nameAddrUri, type ScannedMessage, splitList } from './validate.js';
import { copiedHead, paramName, paramValue } from './wire-response.js';

/** One Contact entry: its URI and its `expires` parameter as written. */
export interface RegisterContact {
  readonly uri: string;
  readonly expires: string | undefined;
}

export class RegisterRequest {
  readonly method = 'REGISTER';
  /** Its answer's key among the recent replies (the stack's), null when it has no branch. */
  replyKey: string | null = null;
  private head: string | undefined;

  constructor(
    private readonly message: ScannedMessage,
    /** Where it came from: the answer goes back there. */
    readonly flow: Flow,
  ) {}

  get uri(): string {
    return this.message.requestUri;
  }

  /** The first value of header `name` (canonical: lower case, compact forms expanded). */
  header(name: string): string | undefined {
    const { names, values } = this.message;
    for (let i = 0; i < names.length; i++) if (names[i] === name) return values[i];
    return undefined;
  }

  /** Every value of header `name`, in order. */
  all(name: string): string[] {
    const { names, values } = this.message;
    const out: string[] = [];
    for (let i = 0; i < names.length; i++) if (names[i] === name) out.push(values[i] as string);
    return out;
  }

  /** A header written more than once as one value, comma-separated (RFC 3261 §7.3.1). */
  joined(name: string): string | undefined {
    const all = this.all(name);
    return all.length === 0 ? undefined : all.join(',');
  }

  /** To's URI: the address of record (the checks made sure it is there and well formed). */
  get toUri(): string {
    return nameAddrUri(this.header('to') ?? '') ?? '';
  }

  /** The Digest credentials of each Authorization header (null for one that is not Digest). */
  get credentials(): (DigestCredentials | null)[] {
    return this.all('authorization').map(credentialsOf);
  }

  /** The Contact entries; `*` for the wildcard, undefined when there are none. */
  get contacts(): '*' | RegisterContact[] | undefined {
    const out: RegisterContact[] = [];
    for (const value of this.all('contact')) {
      if (value === '*') return '*';
      for (const entry of splitList(value))
        out.push({ uri: nameAddrUri(entry) ?? '', expires: contactExpires(entry) });
    }
    return out.length ? out : undefined;
  }

  get callId(): string {
    return this.header('call-id') ?? '';
  }

  /** CSeq's number (the checks made sure it is one). */
  get seq(): number {
    return Number.parseInt(this.header('cseq') ?? '', 10);
  }

  /** The top Via's branch; undefined without one. */
  get branch(): string | undefined {
    const top = splitList(this.header('via') ?? '')[0] ?? '';
    const parts = splitList(top, ';');
    for (let i = 1; i < parts.length; i++) {
      const part = parts[i] as string;
      if (paramName(part) === 'branch') return paramValue(part) || undefined;
    }
    return undefined;
  }

  /** What the stack's generic checks read (request-checks.ts). */
  get facts(): RequestFacts {
    return {
      method: this.method,
      uri: this.uri,
      maxForwards: this.header('max-forwards'),
      require: this.joined('require'),
      contentType: this.header('content-type'),
      content: this.message.body,
    };
  }

  /** Via (the top one stamped with the source), From, To with a tag, Call-ID, CSeq: made once. */
  answerHead(): string {
    this.head ??= copiedHead(this.message.names, this.message.values, this.flow) ?? '';
    return this.head;
  }
}
