/**
 * The real `twilio` SDK pointed at a local server: a RequestClient whose requests keep the SDK's
 * path, query and form but go to `origin` instead of api.twilio.com. Only loopback origins are
 * accepted, so a mistake never sends credentials off the machine. The same class is the README recipe.
 */
import twilio from 'twilio';
import type * as RequestClientModule from 'twilio/lib/base/RequestClient.js';
import type * as ResponseModule from 'twilio/lib/http/response.js';

type RequestOptions<T> = RequestClientModule.RequestOptions<T>;
type Reply<T> = ResponseModule.default<T>;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

function append(target: URLSearchParams, values: object | undefined): void {
  for (const [k, v] of Object.entries(values ?? {})) {
    // The SDK repeats a member for each element of an array (StatusCallbackEvent).
    for (const one of Array.isArray(v) ? v : [v]) {
      if (one !== undefined && one !== null) target.append(k, String(one));
    }
  }
}

export class LoopbackRequestClient extends twilio.RequestClient {
  /** Every request made, for assertions on what the SDK sent. */
  readonly sent: { method: string; url: string }[] = [];

  constructor(private readonly origin: string) {
    super();
    if (!LOOPBACK.has(new URL(origin).hostname)) throw new Error(`not a loopback origin: ${origin}`);
  }

  override async request<TData>(opts: RequestOptions<TData>): Promise<Reply<TData>> {
    const url = new URL(opts.uri);
    const local = new URL(this.origin);
    url.protocol = local.protocol;
    url.host = local.host;
    append(url.searchParams, opts.params);
    const headers: Record<string, string> = { ...(opts.headers as Record<string, string>) };
    if (opts.username !== undefined) {
      headers.Authorization = `Basic ${Buffer.from(`${opts.username}:${opts.password ?? ''}`).toString('base64')}`;
    }
    let body: string | undefined;
    if (opts.data !== undefined) {
      const form = new URLSearchParams();
      append(form, opts.data as object);
      body = form.toString();
    }
    const method = opts.method.toUpperCase();
    this.sent.push({ method, url: url.pathname + url.search });
    const res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(15_000) });
    const text = await res.text();
    // The SDK parses string bodies itself (JSON.parse in Version/Page).
    return { statusCode: res.status, body: text as TData, headers: Object.fromEntries(res.headers) };
  }
}

/** A `twilio` client for `accountSid`/`authToken` that talks to the server at `origin`. */
export function localTwilio(origin: string, accountSid: string, authToken: string) {
  const httpClient = new LoopbackRequestClient(origin);
  return { client: twilio(accountSid, authToken, { httpClient }), httpClient };
}
