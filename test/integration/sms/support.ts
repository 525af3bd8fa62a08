/**
 * Shared set-up of the SMS integration tests: a local SMSC on the `smpp` server, the real service
 * bound to it (SMPP_URL with short reconnect timers), a programmable webhook server, an account with
 * an SMS-capable number.
 */

import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { TestSmsc } from '../../support/smsc.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

export const SYSTEM_ID = 'esme1';
export const PASSWORD = 'pw';

export interface SmsWorld {
  readonly smsc: TestSmsc;
  readonly hooks: WebhookServer;
  readonly ts: TestServer;
  readonly owner: { sid: string; creds: Credentials };
  readonly number: string;
  /** `{API}/Accounts/{owner}/SMS/Messages` */
  readonly base: string;
}

export function smppUrl(port: number, query = ''): string {
  return `smpp://${SYSTEM_ID}:${PASSWORD}@127.0.0.1:${port}?reconnect_min=0.05&reconnect_max=0.3${query}`;
}

export async function waitFor(
  pred: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`waitFor timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function createAccount(ts: TestServer, email: string, role = 'Administrator') {
  const res = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: email, Password: 'password-123', Role: role },
  });
  if (res.status !== 201) throw new Error(`account not created: ${res.text}`);
  return {
    sid: res.json.sid as string,
    creds: { user: res.json.sid as string, secret: res.json.auth_token as string },
  };
}

export async function buyNumber(
  ts: TestServer,
  acct: { sid: string; creds: Credentials },
  phoneNumber: string,
  form: Record<string, string> = {},
) {
  const res = await ts.request('POST', `${API}/Accounts/${acct.sid}/IncomingPhoneNumbers.json`, {
    auth: acct.creds,
    form: { PhoneNumber: phoneNumber, ...form },
  });
  if (res.status !== 201) throw new Error(`number not bought: ${res.text}`);
  return res.json.sid as string;
}

export async function startSmsWorld(
  opts: {
    label: string;
    urlQuery?: string;
    env?: Record<string, string>;
    number?: string;
    /** The SMSC's random source (throttling decisions), for scripted faults. */
    random?: () => number;
  } = { label: 'sms' },
): Promise<SmsWorld> {
  const smsc = new TestSmsc(opts.random);
  smsc.behaviour.accounts = { [SYSTEM_ID]: PASSWORD };
  const port = await smsc.listen();
  const hooks = await startWebhookServer();
  const ts = await startTestServer({
    label: opts.label,
    env: {
      SMPP_URL: smppUrl(port, opts.urlQuery ?? ''),
      NUMBER_POOL: '+14155550100-+14155550199',
      ...opts.env,
    },
  });
  const owner = await createAccount(ts, `${opts.label}-owner@example.test`);
  const number = opts.number ?? '+14155550100';
  await buyNumber(ts, owner, number, { SmsUrl: `${hooks.origin}/sms` });
  await waitFor(() => ts.server.smppLink?.bound === true, 10_000, 'SMPP bind');
  return { smsc, hooks, ts, owner, number, base: `${API}/Accounts/${owner.sid}/SMS/Messages` };
}

export async function stopSmsWorld(w: SmsWorld | undefined): Promise<void> {
  if (!w) return;
  await w.ts.dispose();
  await w.hooks.close();
  await w.smsc.close();
}

/** Form parameters of a recorded webhook request. */
export function formOf(raw: Buffer): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
}
