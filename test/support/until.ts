/**
 * Polling helpers for integration tests against real peers: a bounded wait that returns the last
 * value seen (the assertion after it says what was expected), and a markup response for the
 * programmable webhook server.
 */

/** Calls `fn` every 50 ms until `ok(value)` or `ms` pass; returns the last value either way. */
export async function until<T>(fn: () => Promise<T> | T, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A scripted webhook response carrying call-control markup (`<Response>` wrapped). */
export function markup(body: string, delayMs = 0) {
  return {
    status: 200,
    headers: { 'Content-Type': 'text/xml' },
    body: `<?xml version="1.0"?><Response>${body}</Response>`,
    delayMs,
  };
}
