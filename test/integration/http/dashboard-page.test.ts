/**
 * The supervisor dashboard used the way a person uses it, in Debian's headless chromium driven by
 * playwright-core: open /dashboard, log in, see a sipp call (held by `<Pause>`) appear with its
 * duration ticking, press "Hang up", see the row go and sipp receive the BYE; mute, unmute and
 * redirect the same way; a sub-account's call is acted on under its own account. Every request
 * stays on loopback. The screenshot of the live call is kept at test-artifacts/dashboard.png
 * (git-ignored). The stream side of the page: dashboard-stream.test.ts.
 */
import { mkdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chromium, launchChromium, loopbackOnly } from '../../support/browser.js';
import { cellText, fillLogin, logIn, openDashboard as open } from '../../support/dashboard.js';
import { ADMIN_EMAIL, API, startTestServer, type TestServer } from '../../support/server.js';
import { runSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

const ARTIFACTS = resolve(import.meta.dirname, '../../../test-artifacts');

let ts: TestServer;
let hooks: WebhookServer;
let browser: Chromium | undefined;
let refused: string[] = [];

beforeAll(async () => {
  ts = await startTestServer({ label: 'dashboard' });
  hooks = await startWebhookServer();
  browser = await launchChromium({ viewport: { width: 1366, height: 768 } });
  refused = await loopbackOnly(browser.context);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await hooks?.close();
  await ts?.dispose();
});

const openDashboard = () => open((browser as Chromium).context, ts.url);

describe('/dashboard in headless Chromium', () => {
  it('refuses wrong credentials and keeps the board hidden', async () => {
    const { page, errors } = await openDashboard();
    await fillLogin(page, ADMIN_EMAIL, 'not-the-password');
    await expect.poll(() => page.locator('#login-error').textContent()).toBe('Wrong credentials');
    expect(await page.locator('#board').isVisible()).toBe(false);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('shows a sipp call live with its duration ticking, hangs it up, and it disappears', async () => {
    hooks.script('/hold', xml('<Pause length="60"/>'));
    const number = '+15550601001';
    const created = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/IncomingPhoneNumbers.json`, {
      form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}/hold` },
    });
    expect(created.status).toBe(201);

    const { page, errors } = await openDashboard();
    await logIn(page);
    expect(await page.locator('#who').textContent()).toContain(ADMIN_EMAIL);
    expect(await page.locator('[data-metric="LiveCalls"]').textContent()).toBe('0');
    // The credential is kept in memory only.
    expect(await page.evaluate('localStorage.length + sessionStorage.length')).toBe(0);

    const target = `127.0.0.1:${ts.server.sip!.stack.port}`;
    const call = runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: number });
    const row = page.locator('#calls tbody tr');
    await row.first().waitFor({ state: 'visible', timeout: 15_000 });
    await expect.poll(() => row.count()).toBe(1);
    const cells = row.first().locator('td');
    await expect.poll(() => cellText(page, 3), { timeout: 10_000 }).toBe('IN_PROGRESS');
    expect(await cells.nth(1).textContent()).toBe(number);
    expect(await cells.nth(2).textContent()).toBe('inbound');
    expect(await row.first().getAttribute('data-sid')).toMatch(/^CA/);
    expect(await page.locator('[data-metric="LiveCalls"]').textContent()).toBe('1');

    // The duration ticks in place: m:ss, strictly later a moment after.
    const duration = row.first().locator('td.duration');
    const seconds = async () => {
      const [m, s] = String(await duration.textContent())
        .split(':')
        .map(Number);
      return (m ?? 0) * 60 + (s ?? 0);
    };
    expect(await duration.textContent()).toMatch(/^\d+:\d{2}$/);
    const first = await seconds();
    await expect.poll(seconds, { timeout: 5_000 }).toBeGreaterThan(first);

    await mkdir(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, 'dashboard.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect((await stat(shot)).size).toBeGreaterThan(1000);

    await row.first().getByRole('button', { name: 'Hang up' }).click();
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(0);
    expect(await page.locator('#no-calls').isVisible()).toBe(true);
    // sipp got its BYE: the hang-up was real, not only on screen.
    expect((await call).errors).toBe('');
    const live = await until(
      async () => (await ts.request('GET', `${API}/Accounts/${ts.admin.sid}/Supervisor.json/livecalls`)).json,
      (l: unknown[]) => l.length === 0,
    );
    expect(live).toEqual([]);
    await expect.poll(() => page.locator('[data-metric="LiveCalls"]').textContent()).toBe('0');

    expect(refused).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("acts on a sub-account's call under its own account: mute, unmute, hang up", async () => {
    const tenant = await ts.request('POST', `${API}/Accounts.json`, {
      form: { EmailAddress: 'dashboard-tenant@example.test', Password: 'password-123' },
    });
    expect(tenant.status).toBe(201);
    hooks.script('/tenant-hold', xml('<Pause length="60"/>'));
    const number = '+15550601002';
    const created = await ts.request('POST', `${API}/Accounts/${tenant.json.sid}/IncomingPhoneNumbers.json`, {
      auth: { user: tenant.json.sid, secret: tenant.json.auth_token },
      form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}/tenant-hold` },
    });
    expect(created.status).toBe(201);

    const { page, errors } = await openDashboard();
    // By AccountSid and AuthToken this time.
    await logIn(page, ts.admin.sid, ts.admin.secret);
    const target = `127.0.0.1:${ts.server.sip!.stack.port}`;
    const call = runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: number });
    const row = page.locator('#calls tbody tr');
    await expect.poll(() => cellText(page, 3), { timeout: 15_000 }).toBe('IN_PROGRESS');
    const sid = String(await row.getAttribute('data-sid'));

    // Each press is a POST to the call under the account that owns it; its answer says muted or not.
    const modified = () =>
      page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes(`/Calls/${sid}.json`));
    let answer = modified();
    await row.getByRole('button', { name: 'Mute' }).click();
    let res = await answer;
    expect(new URL(res.url()).pathname).toBe(`${API}/Accounts/${tenant.json.sid}/Calls/${sid}.json`);
    expect(res.request().postData()).toBe('Mute=true');
    expect(res.status()).toBe(200);
    expect((await res.json()).muted).toBe(true);
    await row.getByRole('button', { name: 'Unmute' }).waitFor();
    answer = modified();
    await row.getByRole('button', { name: 'Unmute' }).click();
    res = await answer;
    expect(res.request().postData()).toBe('Mute=false');
    expect((await res.json()).muted).toBe(false);
    await row.getByRole('button', { name: 'Mute' }).waitFor();

    await row.getByRole('button', { name: 'Hang up' }).click();
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(0);
    expect((await call).errors).toBe('');
    const ended = await ts.request('GET', `${API}/Accounts/${tenant.json.sid}/Calls/${sid}.json`);
    expect(ended.json.status).toBe('completed');
    expect(await page.locator('#status').textContent()).toBe('');
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("shows an account Administrator its own tree's calls (Scope=account) and lets it hang one up", async () => {
    const email = 'dashboard-admin@example.test';
    const tenant = await ts.request('POST', `${API}/Accounts.json`, {
      form: { EmailAddress: email, Password: 'password-456', Role: 'Administrator' },
    });
    expect(tenant.status).toBe(201);
    hooks.script('/admin-hold', xml('<Pause length="60"/>'));
    const number = '+15550601004';
    const created = await ts.request('POST', `${API}/Accounts/${tenant.json.sid}/IncomingPhoneNumbers.json`, {
      auth: { user: tenant.json.sid, secret: tenant.json.auth_token },
      form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}/admin-hold` },
    });
    expect(created.status).toBe(201);

    const { page, errors } = await openDashboard();
    const scoped = page.waitForResponse((r) => r.url().includes('Scope=account') && r.status() === 200);
    await logIn(page, email, 'password-456');
    await scoped;
    expect(await page.locator('#who').textContent()).toBe(`${email} (account tree)`);
    // The stream counts the registered clients of the tree (none here); REST cannot (per node only).
    await expect
      .poll(() => page.locator('[data-metric="RegisteredUsers"]').textContent(), { timeout: 10_000 })
      .toBe('0');
    const target = `127.0.0.1:${ts.server.sip!.stack.port}`;
    const call = runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: number });
    const row = page.locator('#calls tbody tr');
    await expect.poll(() => cellText(page, 3), { timeout: 15_000 }).toBe('IN_PROGRESS');
    expect(await row.locator('td').nth(1).textContent()).toBe(number);
    await row.getByRole('button', { name: 'Hang up' }).click();
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(0);
    expect((await call).errors).toBe('');
    expect(await page.locator('#status').textContent()).toBe('');
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('redirects a call to new markup from the dialog', async () => {
    hooks.script('/redirect-hold', xml('<Pause length="60"/>'));
    hooks.script('/goodbye', xml('<Hangup/>'));
    const number = '+15550601003';
    const created = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/IncomingPhoneNumbers.json`, {
      form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}/redirect-hold` },
    });
    expect(created.status).toBe(201);
    const { page, errors } = await openDashboard();
    await logIn(page);
    const target = `127.0.0.1:${ts.server.sip!.stack.port}`;
    const call = runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: number });
    const row = page.locator('#calls tbody tr');
    await expect.poll(() => cellText(page, 3), { timeout: 15_000 }).toBe('IN_PROGRESS');
    await row.getByRole('button', { name: 'Redirect' }).click();
    await page.getByLabel(/to markup URL/).fill(`${hooks.origin}/goodbye`);
    await page.locator('#redirect-dialog').getByRole('button', { name: 'Redirect' }).click();
    // The new document hangs up: the call leaves the board and sipp gets its BYE.
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(0);
    expect((await call).errors).toBe('');
    expect(hooks.requestsTo('/goodbye').length).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('serves only its own files, with its security headers', async () => {
    for (const path of ['/dashboard', '/dashboard/', '/dashboard/dashboard.js', '/dashboard/stream.js']) {
      const r = await ts.request('GET', path, { auth: null });
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-security-policy'), path).toContain("script-src 'self'");
      expect(r.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
    expect(
      (await ts.request('GET', '/dashboard/api.js', { auth: null })).headers.get('content-type'),
    ).toMatch(/^text\/javascript/);
    for (const path of ['/dashboard/routes.ts', '/dashboard/..%2Froutes.ts', '/dashboard/nope.js']) {
      expect((await ts.request('GET', path, { auth: null })).status, path).toBe(404);
    }
    const head = await ts.request('HEAD', '/dashboard', { auth: null });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });
});
