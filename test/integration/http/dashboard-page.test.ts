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
    await page.getByLabel('Email or AccountSid').fill(ADMIN_EMAIL);
    await page.getByLabel('Password or AuthToken').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('#board').waitFor({ state: 'visible' });
    expect(await page.locator('#who').textContent()).toContain(ADMIN_EMAIL);
    expect(await page.locator('[data-metric="LiveCalls"]').textContent()).toBe('0');
    // The credential is kept in memory only.
    expect(await page.evaluate(() => localStorage.length + sessionStorage.length)).toBe(0);

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
      const [m, s] = String(await duration.textContent()).split(':').map(Number);
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
      async () =>
        (await ts.request('GET', `${API}/Accounts/${ts.admin.sid}/Supervisor.json/livecalls`)).json,
      (l: unknown[]) => l.length === 0,
    );
    expect(live).toEqual([]);
    await expect.poll(() => page.locator('[data-metric="LiveCalls"]').textContent()).toBe('0');

    expect(refused).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
