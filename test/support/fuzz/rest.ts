/**
 * REST fuzz case generator, driven by the route table: for every route × method (plus one method the
 * route does not support), requests whose path parameters, query and body carry hostile values.
 * Deterministic per seed (mulberry32); the caller prints the seed when a case fails.
 */
import type { RouteEntry } from '../../../src/http/router.js';
import { prng } from './prng.js';

export interface RestCase {
  readonly method: string;
  /** Path with parameters filled in (already percent-encoded) and query string. */
  readonly path: string;
  readonly headers: Record<string, string>;
  /** Raw body bytes (already encoded for its content type), if any. */
  readonly body?: string;
  /** What the case exercises, for failure messages. */
  readonly label: string;
}

export interface RestFuzzContext {
  /** The caller's own account sid (so account-scoped routes get past the scope check sometimes). */
  readonly ownAccountSid: string;
  /** Real sids of another account's resources, by path parameter name (`accountSid`, `applicationSid`...). */
  readonly foreignSids: Readonly<Record<string, string>>;
}

const pick = <T>(rng: () => number, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)] as T;

/** A hostile value, already percent-encoded (lone surrogates as their invalid UTF-8 bytes). */
export interface HostileValue {
  readonly name: string;
  /** Percent-encoded form. */
  readonly encoded: string;
  /** Raw text for JSON documents (may hold lone surrogates or NUL). */
  readonly raw: string;
}

const enc = (name: string, raw: string): HostileValue => ({ name, raw, encoded: encodeURIComponent(raw) });

/** The hostile values: every one of them must end in a 4xx or a harmless 2xx, never a 5xx. */
export function hostileValues(bigBytes = 1024 * 1024): HostileValue[] {
  return [
    enc('NUL', 'a\u0000b'),
    enc('only NUL', '\u0000'),
    { name: 'lone high surrogate', raw: 'x\ud800y', encoded: 'x%ED%A0%80y' },
    { name: 'lone low surrogate', raw: '\udc00', encoded: '%ED%B0%80' },
    { name: 'bad percent', raw: '%zz', encoded: '%zz' },
    enc('dot dot slash', '../../etc/passwd'),
    enc('encoded dot dot', '..%2F..%2F'),
    enc('SQL', "' OR '1'='1' --; DROP TABLE accounts;"),
    enc('XML', '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>'),
    enc('markup', '<Response><Dial>sip:x@169.254.169.254</Dial></Response>'),
    enc('CRLF', 'a\r\nX-Injected: 1'),
    enc('huge number', '99999999999999999999999999'),
    enc('negative', '-1'),
    enc('minus huge', '-99999999999'),
    enc('float', '1e308'),
    enc('empty', ''),
    enc('spaces', '   '),
    enc('emoji', '\u{1F600}\u{1F4A9}'),
    enc('RTL', '\u202e\u0000\u200b'),
    enc('format string', '%s%n%x%d'),
    enc('JSON', '{"__proto__":{"admin":true}}'),
    enc('proto', '__proto__'),
    enc('long', 'L'.repeat(5000)),
    { name: '1 MB', raw: 'M'.repeat(bigBytes), encoded: 'M'.repeat(bigBytes) },
  ];
}

/** Values short enough to put in a path or query (the HTTP parser caps header sizes at 16 KB). */
const forUrl = (vs: HostileValue[]) => vs.filter((v) => v.encoded.length <= 8000);

/** Form members the routes read; a case sets a few of them to hostile values. */
export const FORM_MEMBERS = [
  'FriendlyName',
  'EmailAddress',
  'Password',
  'Role',
  'Status',
  'OrganizationSid',
  'DomainName',
  'VoiceUrl',
  'VoiceMethod',
  'StatusCallback',
  'Url',
  'To',
  'From',
  'Body',
  'Subject',
  'Login',
  'Proxy',
  'UserName',
  'Register',
  'TTL',
  'AreaCode',
  'PhoneNumber',
  'VoiceApplicationSid',
  'SmsApplicationSid',
  'AccountSid',
  'ExtensionName',
  'ConfigurationData',
  'Timeout',
  'Record',
  'ApiVersion',
  'Enabled',
] as const;

const QUERY_MEMBERS = [
  'Page',
  'PageSize',
  'AfterSid',
  'SortBy',
  'StartTime',
  'EndTime',
  'To',
  'From',
  'Status',
  'Limit',
];

/** Hostile JSON documents for the JSON endpoints (profiles). */
export function hostileJson(rng: () => number): { name: string; body: string } {
  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const docs = [
    { name: 'deep arrays', body: `{"featureEnablement":{"x":${deep(10_000)}}}` },
    { name: 'deep objects', body: `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}` },
    { name: 'NUL', body: '{"featureEnablement":{"x":"a\\u0000"}}' },
    { name: 'NUL name', body: '{"\\u0000":1}' },
    { name: 'lone surrogate', body: '{"featureEnablement":{"x":"\\ud800"}}' },
    { name: 'not JSON', body: '{oops' },
    { name: 'array', body: '[1,2,3]' },
    { name: 'string', body: '"just a string"' },
    { name: 'proto', body: '{"__proto__":{"isSuperAdmin":true}}' },
    { name: 'big', body: `{"featureEnablement":{"x":"${'j'.repeat(200_000)}"}}` },
  ];
  return pick(rng, docs);
}

/**
 * `perRoute` cases for each route × method of `routes`, plus one unsupported method per route. Path
 * parameters get a hostile value, the foreign account's sid for that parameter, or (for
 * `accountSid`) the caller's own sid, so deeper checks are reached too.
 */
export function restCases(
  routes: readonly RouteEntry[],
  ctx: RestFuzzContext,
  opts: { seed: number; perRoute: number },
): RestCase[] {
  const rng = prng(opts.seed);
  const all = hostileValues();
  const urlValues = forUrl(all);
  const out: RestCase[] = [];
  for (const route of routes) {
    const params = (route.path.match(/:(\w+)/g) ?? []).map((p) => p.slice(1));
    const methods = [
      ...route.methods,
      pick(
        rng,
        ['PATCH', 'DELETE', 'PUT'].filter((m) => !route.methods.includes(m as never)),
      ),
    ];
    const json = route.path.includes('/Profiles');
    for (const method of methods) {
      for (let i = 0; i < opts.perRoute; i++) {
        const labels: string[] = [];
        let path = route.path;
        for (const param of params) {
          const r = rng();
          let value: string;
          if (param === 'accountSid' && r < 0.5) {
            value = ctx.ownAccountSid;
          } else if (r < 0.75 && ctx.foreignSids[param]) {
            value = ctx.foreignSids[param] as string;
            labels.push(`${param}=foreign`);
          } else {
            const h = pick(rng, urlValues);
            value = h.encoded;
            labels.push(`${param}=${h.name}`);
          }
          path = path.replace(`:${param}`, value);
        }
        if (rng() < 0.5) path += '.json';
        const q = rng() < 0.6 ? pick(rng, QUERY_MEMBERS) : null;
        if (q) {
          const h = pick(rng, urlValues);
          path += `?${q}=${h.encoded}`;
          labels.push(`?${q}=${h.name}`);
        }
        const headers: Record<string, string> = {};
        let body: string | undefined;
        if (method !== 'GET' && method !== 'DELETE' && method !== 'HEAD') {
          if (json && rng() < 0.8) {
            const doc = hostileJson(rng);
            body = doc.body;
            headers['content-type'] = pick(rng, [
              'application/json',
              'application/instance+json;schema=http://x/2012-04-24/Profiles/schemas/rc-profile-schema.json',
              'application/instance+json;schema=http://x/2012-04-24/Profiles/schemas/rc-subscriber-schema.json',
            ]);
            labels.push(`json=${doc.name}`);
          } else {
            const n = 1 + Math.floor(rng() * 3);
            const pairs: string[] = [];
            for (let k = 0; k < n; k++) {
              const member = pick(rng, FORM_MEMBERS);
              const h = pick(rng, all);
              pairs.push(`${member}=${h.encoded}`);
              labels.push(`${member}=${h.name}`);
            }
            body = pairs.join('&');
            headers['content-type'] = rng() < 0.9 ? 'application/x-www-form-urlencoded' : 'application/json';
          }
          if (json && rng() < 0.3) {
            headers['x-http-method-override'] = pick(rng, ['LINK', 'UNLINK']);
            headers.link = `<http://x/2012-04-24/Accounts/${ctx.foreignSids.accountSid ?? 'AC0'}>;rel=related`;
            labels.push(headers['x-http-method-override']);
          }
        }
        out.push({ method, path, headers, ...(body === undefined ? {} : { body }), label: labels.join(' ') });
      }
    }
  }
  return out;
}
