/**
 * The supervisor dashboard used the way a person uses it, in Debian's headless chromium driven by
 * playwright-core: open /dashboard, log in with the Super Admin's email and password, see a sipp
 * call (held by `<Pause>`) appear with its duration ticking, press "Hang up", see the row go and
 * sipp receive the BYE. Every request stays on loopback. The screenshot of the live call is kept at
 * test-artifacts/dashboard.png (git-ignored).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingToolMessage } from '../../../ops/lib/tools.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, API, startTestServer, type TestServer } from '../../support/server.js';
import { runSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ARTIFACTS = resolve(import.meta.dirname, '../../../test-artifacts');

let ts: TestServer;
let hooks: WebhookServer;
let profileDir: string;
let context: BrowserContext | undefined;

beforeAll(async () => {
  ts = await startTestServer({ label: 'dashboard' });
  hooks = await startWebhookServer();
  profileDir = await mkdtemp(join(tmpdir(), 'sb-chromium-'));
  try {
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      timeout: 60_000,
      viewport: { width: 1366, height: 768 },
    });
  } catch (e) {
    throw new Error(
      existsSync(CHROMIUM)
        ? `chromium did not start: ${(e as Error).message}`
        : missingToolMessage('chromium'),
    );
  }
}, 90_000);

afterAll(async () => {
  await context?.close();
  await hooks?.close();
  await ts?.dispose();
  if (profileDir) await rm(profileDir, { recursive: true, force: true });
});

async function logIn(page: Page, user = ADMIN_EMAIL, secret = ADMIN_PASSWORD): Promise<void> {
  await page.getByLabel('Email or AccountSid').fill(user);
  await page.getByLabel('Password or AuthToken').fill(secret);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('#board').waitFor({ state: 'visible' });
}

async function openDashboard(): Promise<{ page: Page; refused: string[]; errors: string[] }> {
  const ctx = context as BrowserContext;
  const refused: string[] = [];
  await ctx.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).hostname === '127.0.0.1') return route.continue();
    refused.push(url);
    return route.abort();
  });
  const page = await ctx.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const response = await page.goto(`${ts.url}/dashboard`, { waitUntil: 'load' });
  expect(response?.status()).toBe(200);
  expect(response?.headers()['content-security-policy']).toContain("default-src 'self'");
  return { page, refused, errors };
}

describe('/dashboard in headless Chromium', () => {
  it('refuses wrong credentials and keeps the board hidden', async () => {
    const { page, errors } = await openDashboard();
    await page.getByLabel('Email or AccountSid').fill(ADMIN_EMAIL);
    await page.getByLabel('Password or AuthToken').fill('not-the-password');
    await page.getByRole('button', { name: 'Log in' }).click();
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

    const { page, refused, errors } = await openDashboard();
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
    await expect.poll(() => cells.nth(3).textContent(), { timeout: 10_000 }).toBe('IN_PROGRESS');
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
    await expect.poll(() => row.locator('td').nth(3).textContent(), { timeout: 15_000 }).toBe('IN_PROGRESS');
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
    // Registrations are counted per node, not per account: unknown here.
    expect(await page.locator('[data-metric="RegisteredUsers"]').textContent()).toBe('–');
    const target = `127.0.0.1:${ts.server.sip!.stack.port}`;
    const call = runSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: number });
    const row = page.locator('#calls tbody tr');
    await expect
      .poll(
        () =>
          row
            .locator('td')
            .nth(3)
            .textContent({ timeout: 1000 })
            .catch(() => null),
        {
          timeout: 15_000,
        },
      )
      .toBe('IN_PROGRESS');
    expect(await row.locator('td').nth(1).textContent()).toBe(number);
    await row.getByRole('button', { name: 'Hang up' }).click();
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(0);
    expect((await call).errors).toBe('');
    expect(await page.locator('#status').textContent()).toBe('');
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('uses the Supervisor stream when the tickets endpoint answers, following snapshot and deltas', async () => {
    const { page, errors } = await openDashboard();
    const tickets: string[] = [];
    // The stream is another part of the server; here its protocol is played by the test.
    await page.route('**/Supervisor.json/tickets', (route) => {
      tickets.push(route.request().method());
      return route.fulfill({ status: 200, contentType: 'application/json', body: '{"ticket":"tk-1"}' });
    });
    const opened: string[] = [];
    let send: (frame: object) => void = () => {};
    await page.routeWebSocket(/\/Supervisor\/stream/, (ws) => {
      opened.push(ws.url());
      send = (frame) => ws.send(JSON.stringify(frame));
      const now = Date.now();
      send({
        type: 'snapshot',
        seq: 7,
        calls: [
          {
            sid: 'CA00000000000000000000000000000001',
            from: '+15550000001',
            to: '+15550000002',
            direction: 'inbound',
            state: 'IN_PROGRESS',
            dateCreated: now - 65_000,
            answeredAt: now - 61_000,
            verb: 'Dial',
          },
        ],
        metrics: { LiveCalls: 1, LiveIncomingCalls: 1, LiveOutgoingCalls: 0, RegisteredUsers: 2 },
      });
    });
    await logIn(page);
    await expect.poll(() => page.locator('#feed').textContent()).toBe('live stream');
    expect(tickets).toEqual(['POST']);
    expect(new URL(opened[0]!).searchParams.get('ticket')).toBe('tk-1');
    expect(new URL(opened[0]!).pathname).toBe(`${API}/Accounts/${ts.admin.sid}/Supervisor/stream`);

    const row = page.locator('#calls tbody tr');
    await expect.poll(() => row.locator('td').nth(4).textContent()).toMatch(/^1:0\d$/);
    expect(await row.locator('td').nth(5).textContent()).toBe('Dial');
    expect(await page.locator('[data-metric="RegisteredUsers"]').textContent()).toBe('2');

    const at = Date.now();
    send({
      type: 'call.updated',
      seq: 8,
      at,
      call: { sid: 'CA00000000000000000000000000000001', bridgedWith: 'CA00000000000000000000000000000002' },
    });
    await expect
      .poll(() => row.locator('td').nth(6).textContent())
      .toBe('CA00000000000000000000000000000002');
    // A replayed (already seen) event changes nothing.
    send({ type: 'call.ended', seq: 8, at, call: { sid: 'CA00000000000000000000000000000001' } });
    send({ type: 'metrics', seq: 9, at, metrics: { LiveCalls: 1, RegisteredUsers: 3 } });
    await expect.poll(() => page.locator('[data-metric="RegisteredUsers"]').textContent()).toBe('3');
    expect(await row.count()).toBe(1);
    send({ type: 'call.ended', seq: 10, at, call: { sid: 'CA00000000000000000000000000000001' } });
    await expect.poll(() => row.count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('resumes a dropped stream with since=<last seq>, and polls once reconnecting keeps failing', async () => {
    const { page, errors } = await openDashboard();
    let tickets = 0;
    await page.route('**/Supervisor.json/tickets', (route) => {
      tickets += 1;
      return route.fulfill({
        status: 201,
        contentType: 'application/json',
        body: `{"ticket":"tk-${tickets}"}`,
      });
    });
    // The first connection works and then drops; every later one is refused.
    const urls: string[] = [];
    await page.routeWebSocket(/\/Supervisor\/stream/, (ws) => {
      urls.push(ws.url());
      if (urls.length > 1) {
        ws.close({ code: 1011, reason: 'down' });
        return;
      }
      ws.send(JSON.stringify({ type: 'snapshot', seq: 41, calls: [], metrics: { LiveCalls: 0 } }));
      setTimeout(() => ws.close({ code: 1011, reason: 'restarting' }), 200);
    });
    await logIn(page);
    await expect.poll(() => page.locator('#feed').textContent()).toBe('live stream');
    await expect
      .poll(() => page.locator('#feed').textContent(), { timeout: 15_000 })
      .toBe('polling every 2 s');
    // Three reconnections, each with a fresh ticket and the last event seen.
    expect(urls.length).toBe(4);
    expect(tickets).toBe(4);
    expect(new URL(urls[0]!).searchParams.has('since')).toBe(false);
    urls.slice(1).forEach((url, i) => {
      expect(new URL(url).searchParams.get('since')).toBe('41');
      expect(new URL(url).searchParams.get('ticket')).toBe(`tk-${i + 2}`);
    });
    expect(await page.locator('[data-metric="LiveCalls"]').textContent()).toBe('0');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

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
    await expect
      .poll(
        () =>
          row
            .locator('td')
            .nth(3)
            .textContent({ timeout: 1000 })
            .catch(() => null),
        {
          timeout: 15_000,
        },
      )
      .toBe('IN_PROGRESS');
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
