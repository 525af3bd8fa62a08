/**
 * Where webhooks may go (SSRF policy, benchmarks-and-faults R17) and per-URL connection overrides
 * (Twilio's `#ct=..&rt=..&tt=..&rc=..&rp=..` fragment,
 * https://www.twilio.com/docs/usage/webhooks/webhooks-connection-overrides).
 *
 * Which addresses may be contacted is the shared classification of src/security/address-policy.ts
 * (link-local and metadata always refused; loopback and private ranges when `WEBHOOK_BLOCK_PRIVATE=true`).
 * Host names are checked after DNS resolution: if any resolved address is blocked the URL is refused,
 * and the connection is pinned to the checked address so a second resolution cannot rebind it.
 */
export {
  type AddressPolicy,
  blockedHostReason,
  blockedReason,
} from '../security/address-policy.js';

/** Failure classes a retry policy can name (Twilio `rp` values in brackets). */
export const RetryClass = {
  /** Connection refused, reset before a response, connect timeout, DNS failure (`ct`). */
  Connect: 'connect',
  /** No complete response within the read or total timeout after connecting (`rt`). */
  ReadTimeout: 'read-timeout',
  /** A 4xx response (`4xx`). */
  Status4xx: '4xx',
  /** A 5xx response (`5xx`). */
  Status5xx: '5xx',
} as const;
export type RetryClass = (typeof RetryClass)[keyof typeof RetryClass];

/** Per-URL connection settings after applying a fragment on top of defaults. */
export interface ConnectionSettings {
  readonly connectTimeoutMs: number;
  readonly readTimeoutMs: number;
  readonly totalTimeoutMs: number;
  readonly retries: number;
  readonly retryOn: readonly RetryClass[];
}

/** A webhook URL split into what is sent (no fragment) and its connection settings. */
export interface WebhookTarget {
  /** The URL sent and signed: the configured URL with any `#...` fragment removed. */
  readonly url: URL;
  readonly settings: ConnectionSettings;
  /** Override keys that were present but out of range or unknown (ignored; reported by the caller). */
  readonly ignoredOverrides: readonly string[];
}

const RANGES = {
  ct: [100, 10_000],
  rt: [100, 15_000],
  tt: [100, 15_000],
  rc: [0, 5],
} as const;

function parseRetryPolicy(value: string): RetryClass[] | null {
  const out = new Set<RetryClass>();
  for (const token of value.split(',')) {
    switch (token.trim()) {
      case 'ct':
        out.add(RetryClass.Connect);
        break;
      case 'rt':
        out.add(RetryClass.ReadTimeout);
        break;
      case '4xx':
        out.add(RetryClass.Status4xx);
        break;
      case '5xx':
        out.add(RetryClass.Status5xx);
        break;
      case 'all':
        for (const c of Object.values(RetryClass)) out.add(c);
        break;
      default:
        return null;
    }
  }
  return [...out];
}

/**
 * Parses a webhook URL: http(s) only (`user:password@` is allowed and sent as Basic auth); strips the fragment and applies its
 * overrides (`ct`, `rt`, `tt`, `rc`, `rp`) on top of `defaults`. Returns null for an unusable URL.
 */
export function parseWebhookUrl(raw: string, defaults: ConnectionSettings): WebhookTarget | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (!url.hostname) return null;
  const fragment = url.hash.startsWith('#') ? url.hash.slice(1) : '';
  url.hash = '';
  const ignored: string[] = [];
  let { connectTimeoutMs, readTimeoutMs, totalTimeoutMs, retries } = defaults;
  let retryOn = defaults.retryOn;
  if (fragment) {
    for (const [key, value] of new URLSearchParams(fragment)) {
      if (key === 'rp') {
        const p = parseRetryPolicy(value);
        if (p) retryOn = p;
        else ignored.push(key);
        continue;
      }
      if (key === 'ct' || key === 'rt' || key === 'tt' || key === 'rc') {
        const [min, max] = RANGES[key];
        const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
        if (!(n >= min && n <= max)) {
          ignored.push(key);
          continue;
        }
        if (key === 'ct') connectTimeoutMs = n;
        else if (key === 'rt') readTimeoutMs = n;
        else if (key === 'tt') totalTimeoutMs = n;
        else retries = n;
        continue;
      }
      // Twilio's `e` (edge) and `sni` have no meaning here.
      ignored.push(key);
    }
  }
  return {
    url,
    settings: { connectTimeoutMs, readTimeoutMs, totalTimeoutMs, retries, retryOn },
    ignoredOverrides: ignored,
  };
}
