/**
 * GET for Play URLs with the platform's SSRF policy (src/webhooks/url-policy.ts, the same rules as
 * webhooks): Play URLs come from customer markup, so the engine must not fetch the cloud metadata
 * service or, when `blockPrivate` is on, loopback and private ranges. Host names are checked after
 * DNS resolution and the socket is pinned to the checked address (a second resolution cannot
 * rebind it); each redirect (at most 5) is checked again.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { blockedHostReason, blockedReason } from '../../security/address-policy.js';
import { PlayError } from './errors.js';

const MAX_REDIRECTS = 5;

/** A response whose body has not been read yet. */
export interface HttpResponse {
  readonly status: number;
  header(name: string): string | null;
  readonly body: IncomingMessage;
}

export interface HttpGetOptions {
  readonly headers: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
  /** Refuse loopback and private ranges too (`WEBHOOK_BLOCK_PRIVATE`). */
  readonly blockPrivate: boolean;
}

function policyLookup(blockPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true }, (err, addresses: LookupAddress[]) => {
      if (err) {
        callback(err, '', 0);
        return;
      }
      for (const a of addresses) {
        const reason = blockedReason(a.address, { blockPrivate });
        if (reason) {
          const e: NodeJS.ErrnoException = new Error(`${hostname}: ${reason}`);
          e.code = 'E_MEDIA_POLICY';
          callback(e, '', 0);
          return;
        }
      }
      const first = addresses[0];
      if (!first) {
        const e: NodeJS.ErrnoException = new Error(`no address for ${hostname}`);
        e.code = 'ENOTFOUND';
        callback(e, '', 0);
        return;
      }
      if (options.all) callback(null, [{ address: first.address, family: first.family }]);
      else callback(null, first.address, first.family);
    });
  };
}

/** Refusal for an IP-literal or metadata host name, checked before connecting. */
function precheck(url: URL, blockPrivate: boolean): string | null {
  const hostReason = blockedHostReason(url.hostname);
  if (hostReason) return hostReason;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) === 0 ? null : blockedReason(host, { blockPrivate });
}

function once(url: URL, o: HttpGetOptions): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(url, {
      method: 'GET',
      headers: { 'user-agent': 'switchboard-media', ...o.headers },
      lookup: policyLookup(o.blockPrivate),
      signal: o.signal,
    });
    req.once('response', resolve);
    req.once('error', reject);
    req.end();
  });
}

/** GETs `url`, following redirects; rejects with `PlayError('fetch-failed')` on refusal or network error. */
export async function httpGet(url: URL, o: HttpGetOptions): Promise<HttpResponse> {
  let current = url;
  for (let hop = 0; ; hop++) {
    if (current.protocol !== 'http:' && current.protocol !== 'https:') {
      throw new PlayError('fetch-failed', `unsupported scheme ${current.protocol}`);
    }
    const refused = precheck(current, o.blockPrivate);
    if (refused) throw new PlayError('fetch-failed', `refused by the URL policy: ${refused}`);
    let res: IncomingMessage;
    try {
      res = await once(current, o);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const what = e.code === 'E_MEDIA_POLICY' ? 'refused by the URL policy' : (e.code ?? 'error');
      throw new PlayError('fetch-failed', `GET ${current.href}: ${what}: ${e.message}`, { cause: err });
    }
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (status >= 300 && status < 400 && status !== 304 && location) {
      res.destroy();
      if (hop >= MAX_REDIRECTS) throw new PlayError('fetch-failed', `more than ${MAX_REDIRECTS} redirects`);
      current = new URL(location, current);
      continue;
    }
    return {
      status,
      body: res,
      header: (name) => {
        const v = res.headers[name.toLowerCase()];
        return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
      },
    };
  }
}
