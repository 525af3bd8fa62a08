/**
 * The Super Admin's REST calls to a server running as its own process (server-process.ts): GET, or
 * POST with a form, Basic auth with the test admin's email and password; the JSON body or null.
 */
import { ADMIN_EMAIL, ADMIN_PASSWORD } from './server.js';

const auth = `Basic ${Buffer.from(`${ADMIN_EMAIL}:${ADMIN_PASSWORD}`).toString('base64')}`;

export async function adminApi(base: string, path: string, form?: Record<string, string>) {
  const r = await fetch(`${base}${path}`, {
    method: form ? 'POST' : 'GET',
    headers: {
      authorization: auth,
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
  });
  return { status: r.status, json: (await r.json().catch(() => null)) as Record<string, unknown> | null };
}
