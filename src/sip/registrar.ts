/**
 * Registrar and location service (RFC 3261 §10.3) with digest authentication (spec §Client,
 * Authentication 7). The realm is the domain of the account's organization; a REGISTER addressed
 * to the service's own address belongs to the default organization's domain. Only an enabled
 * client of an active account may register (others 403). Bindings live in Redis with their
 * expiry; TCP and WS clients are reached again over the connection they registered on.
 * The hot path is memory and one Redis script: the client store given here caches credentials
 * (CachedClientStore), nonces are stateless, and the binding write is one round trip.
 */
import type { Logger } from 'pino';
import type { StackAuth } from 'sip';
import type { ClientStore, DigestSubject } from '../store/client-store.js';
import type {
  Binding,
  RegistrationChange,
  RegistrationObserver,
  RegistrationStore,
} from '../store/registration-store.js';
import {
  challengeHeader,
  type DigestCredentials,
  issueNonce,
  readCredentials,
  responseMatches,
  verifyNonce,
} from './digest.js';
import { detached, type SipRequest, sipUriOf } from './message.js';
import { RegisterRequest } from './register-request.js';
import type { SipStack } from './stack.js';
import { RegistrarLimits } from './timers.js';

export interface RegistrarOptions {
  /** Domain of the default organization (spec §Organization). */
  readonly defaultDomain: string;
  /** Host names and addresses that mean "this service" in a Request-URI or To. */
  readonly ownHosts: readonly string[];
  readonly minExpires?: number;
  readonly maxExpires?: number;
  readonly defaultExpires?: number;
}

export type AuthOutcome =
  | { readonly ok: true; readonly subject: DigestSubject; readonly domain: string }
  | { readonly ok: false };

export class Registrar {
  private readonly own: Set<string>;
  /** The digest secret every node shares (read once; a failed read is tried again next time). */
  private secret: Promise<string> | null = null;
  /** The secret once read (requests then take it without an await). */
  private secretValue: string | null = null;
  /** The Date header of the 200s, made once a second. */
  private date = { second: -1, text: '' };
  private readonly observers: RegistrationObserver[] = [];

  constructor(
    private readonly stack: SipStack,
    private readonly store: RegistrationStore,
    private readonly clients: ClientStore,
    private readonly options: RegistrarOptions,
    private readonly log: Logger,
  ) {
    this.own = new Set(options.ownHosts.map((h) => h.toLowerCase()));
  }

  /** Tells `observer` of every binding change this node makes (not of expiries: those are by time). */
  onChange(observer: RegistrationObserver): void {
    this.observers.push(observer);
  }

  private announce(change: RegistrationChange): void {
    for (const o of this.observers) {
      try {
        o(change);
      } catch (err) {
        this.log.error({ err }, 'registration observer failed');
      }
    }
  }

  /** The organization domain a host in a SIP URI stands for. */
  domainOf(host: string): string {
    const h = host.toLowerCase().replace(/^\[|\]$/g, '');
    return this.own.has(h) ? this.options.defaultDomain.toLowerCase() : h;
  }

  /** Address of record `login@domain` for a client of the organization with `domain`. */
  static aor(login: string, domain: string): string {
    return `${login}@${domain.toLowerCase()}`;
  }

  /** Live bindings of a client (location lookup for call routing), newest first. */
  async locate(login: string, domain: string): Promise<Binding[]> {
    const list = await this.store.list(Registrar.aor(login, domain));
    return list.sort((a, b) => b.expiresAt - a.expiresAt);
  }

  countRegistered(): Promise<number> {
    return this.store.countRegistered();
  }

  /**
   * Digest authentication of a request from a client (REGISTER: 401/WWW-Authenticate; other
   * requests: 407/Proxy-Authenticate). Answers the request itself when the outcome is not ok:
   * a challenge, 403 for a disabled client or an account that is not active.
   */
  async authenticate(rq: SipRequest | RegisterRequest, domain: string): Promise<AuthOutcome> {
    const proxy = rq.method !== 'REGISTER';
    const creds = credentialsIn(rq).find((c) => c && c.realm.toLowerCase() === domain);
    if (!creds) {
      await this.challenge(rq, domain, proxy, false);
      return { ok: false };
    }
    const nonce = verifyNonce(
      this.secretValue ?? (await this.digestSecret()),
      creds.nonce,
      domain,
      sourceOf(rq),
      RegistrarLimits.NONCE_TTL * 1000,
    );
    if (nonce !== 'valid') {
      await this.challenge(rq, domain, proxy, nonce === 'stale');
      return { ok: false };
    }
    const subject = await this.clients.findForDigest(domain, creds.username);
    if (!subject || !responseMatches(subject.client.ha1, rq.method, creds)) {
      this.log.info({ login: creds.username, domain }, 'sip digest failed');
      await this.challenge(rq, domain, proxy, false);
      return { ok: false };
    }
    if (subject.client.status !== 1 || subject.accountStatus !== 'active') {
      this.stack.respond(rq, 403, {
        reason: subject.client.status !== 1 ? 'Client Disabled' : 'Account Not Active',
      });
      return { ok: false };
    }
    return { ok: true, subject, domain };
  }

  /** Read while `secretValue` is not known yet (callers take that first: no await per request). */
  private digestSecret(): Promise<string> {
    if (!this.secret) {
      this.secret = this.store.digestSecret();
      this.secret.then(
        (value) => {
          this.secretValue = value;
        },
        () => {
          this.secret = null;
        },
      );
    }
    return this.secret;
  }

  /** A 401/407 with a fresh stateless nonce: nothing is stored per challenge. */
  private async challenge(
    rq: SipRequest | RegisterRequest,
    realm: string,
    proxy: boolean,
    stale: boolean,
  ): Promise<void> {
    const nonce = issueNonce(this.secretValue ?? (await this.digestSecret()), realm, sourceOf(rq));
    const h: StackAuth[] = [challengeHeader(realm, nonce, stale)];
    this.stack.respond(rq, proxy ? 407 : 401, {
      headers: proxy ? { 'proxy-authenticate': h } : { 'www-authenticate': h },
    });
  }

  /** RFC 1123 time of `now`, as the 200 to a REGISTER carries it (§20.17); to the second. */
  private dateHeader(now: number): string {
    const second = Math.floor(now / 1000);
    if (this.date.second !== second) this.date = { second, text: new Date(second * 1000).toUTCString() };
    return this.date.text;
  }

  /** Handles one REGISTER end to end; never throws (a store failure answers 500). */
  async handleRegister(rq: RegisterRequest): Promise<void> {
    try {
      await this.register(rq);
    } catch (err) {
      this.log.error({ err }, 'REGISTER failed');
      this.stack.respond(rq, 500);
    }
  }

  private async register(rq: RegisterRequest): Promise<void> {
    const flow = rq.flow;
    const toUri = sipUriOf(rq.toUri);
    const login = toUri?.user;
    // An address of record must be a SIP URI with a user (RFC 3261 §10.3 step 3; RFC 4475 unksm2).
    if (!toUri || toUri.scheme === 'tel' || !login)
      return void this.stack.respond(rq, 400, { reason: 'Bad Address Of Record' });
    const domain = this.domainOf(toUri.host);
    const auth = await this.authenticate(rq, domain);
    if (!auth.ok) return;
    if (auth.subject.client.login !== login)
      return void this.stack.respond(rq, 403, { reason: 'Wrong User' });

    // Bindings outlive the request (the supervisor's view keeps them): no slices of its text.
    const aor = detached(Registrar.aor(login, domain));
    const now = Date.now();
    const contacts = rq.contacts;
    const headerExpires = rq.header('expires');
    const min = this.options.minExpires ?? RegistrarLimits.MIN_EXPIRES;
    const max = this.options.maxExpires ?? RegistrarLimits.MAX_EXPIRES;
    const dflt = this.options.defaultExpires ?? RegistrarLimits.DEFAULT_EXPIRES;

    let live: Binding[];
    if (contacts === '*') {
      if (headerExpires !== '0')
        return void this.stack.respond(rq, 400, { reason: 'Wildcard Needs Expires 0' });
      await this.store.clear(aor);
      live = [];
      this.announce({ aor, ...subjectOf(auth), at: now, upserted: [], removed: '*' });
    } else if (!contacts || contacts.length === 0) {
      live = await this.store.list(aor);
    } else {
      const upsert: Binding[] = [];
      const remove: string[] = [];
      const userAgent = rq.joined('user-agent');
      const callId = rq.callId;
      const cseq = rq.seq;
      for (const c of contacts) {
        const contact = contactUri(c.uri);
        if (!contact) return void this.stack.respond(rq, 400, { reason: 'Bad Contact' });
        const requested = Number(c.expires ?? headerExpires ?? dflt);
        if (!Number.isFinite(requested) || requested < 0)
          return void this.stack.respond(rq, 400, { reason: 'Bad Expires' });
        if (requested === 0) {
          remove.push(contact);
          continue;
        }
        if (requested < min) {
          return void this.stack.respond(rq, 423, { headers: { 'min-expires': String(min) } });
        }
        upsert.push({
          aor,
          contact: detached(contact),
          expiresAt: now + Math.min(requested, max) * 1000,
          callId,
          cseq,
          accountSid: auth.subject.client.accountSid,
          clientSid: auth.subject.client.sid,
          // Other nodes reach a TCP/WS client through the node holding its connection: this one.
          flow:
            flow.protocol === 'UDP'
              ? flow
              : { ...flow, node: { address: this.stack.host, port: this.stack.port } },
          userAgent: userAgent === undefined ? null : detached(userAgent),
          // The store keeps the first registration time of a contact it already has.
          registeredAt: now,
        });
      }
      // One round trip: the store checks the contact limit and writes, or writes nothing.
      const applied = await this.store.apply(aor, upsert, remove, RegistrarLimits.MAX_CONTACTS);
      if (!applied) return void this.stack.respond(rq, 403, { reason: 'Too Many Contacts' });
      live = applied;
      this.announce({ aor, ...subjectOf(auth), at: now, upserted: upsert, removed: remove });
      // A refresh (every client, every few minutes) is routine; a new or removed contact is news.
      const added = upsert.filter((u) =>
        applied.some((b) => b.contact === u.contact && b.registeredAt === now),
      ).length;
      const level = added || remove.length ? 'info' : 'debug';
      if (this.log.isLevelEnabled(level))
        this.log[level](
          { aor, added, refreshed: upsert.length - added, removed: remove.length, protocol: flow.protocol },
          'sip registration updated',
        );
    }
    this.stack.respond(rq, 200, {
      headers: {
        // An empty list would print as `Contact: *` in the package's serializer: leave it out.
        ...(live.length
          ? {
              contact: live.map((b) => ({
                uri: b.contact,
                params: { expires: String(Math.max(0, Math.round((b.expiresAt - now) / 1000))) },
              })),
            }
          : {}),
        date: this.dateHeader(now),
      },
    });
  }
}

function subjectOf(auth: Extract<AuthOutcome, { ok: true }>) {
  return { accountSid: auth.subject.client.accountSid, clientSid: auth.subject.client.sid };
}

/** The address the request came from (the stack stamps it as `received` on a parsed one's top Via). */
function sourceOf(rq: SipRequest | RegisterRequest): string {
  if (rq instanceof RegisterRequest) return rq.flow.address;
  return String(rq.headers.via[0]?.params.received ?? rq.headers.via[0]?.host ?? '');
}

/**
 * The Digest credentials a request offers: a REGISTER's Authorization (read from its text), any
 * other request's Proxy-Authorization.
 */
function credentialsIn(rq: SipRequest | RegisterRequest): (DigestCredentials | null)[] {
  if (rq instanceof RegisterRequest) return rq.credentials;
  return (rq.headers['proxy-authorization'] ?? []).map((a) => readCredentials(a));
}

function contactUri(uri: string): string | null {
  const parsed = sipUriOf(uri);
  return parsed && parsed.scheme !== 'tel' ? uri : null;
}
