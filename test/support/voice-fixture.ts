/**
 * The setting most voice tests start from: a test server, a webhook server whose `/status` answers
 * 204, one Developer account (its sid and Basic credentials), the server's SIP address as sipp's
 * target, and a numbered-phone-number factory on that account.
 */
import { expect } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from './server.js';
import { startWebhookServer, type WebhookServer } from './webhook-server.js';

export interface VoiceFixture {
  readonly ts: TestServer;
  readonly hooks: WebhookServer;
  readonly owner: { readonly sid: string; readonly creds: Credentials };
  /** `127.0.0.1:<sip port>`: where sipp sends its calls. */
  readonly target: string;
  /** Buys the next number of `prefix` (digits after `+1555`) with the given IncomingPhoneNumber fields. */
  buyNumber(prefix: string, form: Record<string, string>): Promise<{ sid: string; number: string }>;
  dispose(): Promise<void>;
}

export async function startVoiceFixture(label: string, email: string): Promise<VoiceFixture> {
  const ts = await startTestServer({ label });
  const hooks = await startWebhookServer();
  hooks.script('/status', { status: 204 });
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: email, Password: 'password-123', Role: 'Developer' },
  });
  const owner = { sid: r.json.sid as string, creds: { user: r.json.sid, secret: r.json.auth_token } };
  let seq = 100;
  return {
    ts,
    hooks,
    owner,
    target: `127.0.0.1:${ts.server.sip!.stack.port}`,
    async buyNumber(prefix, form) {
      const number = `+1555${prefix}${String(seq++).padStart(4, '0')}`;
      const bought = await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
        auth: owner.creds,
        form: { PhoneNumber: number, ...form },
      });
      expect(bought.status).toBe(201);
      return { sid: bought.json.sid, number };
    },
    async dispose() {
      await hooks.close();
      await ts.dispose();
    },
  };
}
