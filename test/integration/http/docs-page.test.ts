/**
 * The API reference renders in a real browser: Debian's chromium, driven by playwright-core, loads
 * /docs, Redoc (served from the installed package) renders the operations from /openapi.json, and
 * no request leaves loopback — the page must work offline and tell no third party who reads it.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chromium, launchChromium } from '../../support/browser.js';
import { startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
let browser: Chromium | undefined;
let context: BrowserContext | undefined;
let profileDir: string;

beforeAll(async () => {
  ts = await startTestServer({ label: 'docs' });
  browser = await launchChromium();
  context = browser.context;
  profileDir = browser.profileDir;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await ts?.dispose();
});

describe('/docs in headless Chromium', () => {
  it('renders the reference from /openapi.json without any request leaving loopback', async () => {
    const ctx = context as BrowserContext;
    const requested: string[] = [];
    const refused: string[] = [];
    // Every request of the page and its workers goes through here; anything not on 127.0.0.1 is
    // recorded and aborted, so the test itself never reaches the network.
    await ctx.route('**/*', (route) => {
      const url = route.request().url();
      requested.push(url);
      if (new URL(url).hostname === '127.0.0.1') return route.continue();
      refused.push(url);
      return route.abort();
    });
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // Redoc's footer links a logo on its CDN: the page's Content-Security-Policy blocks it in the
    // browser, before any connection. Such attempts are allowed; anything else off loopback is not.
    const blockedByPolicy: string[] = [];
    page.on('requestfailed', (r) => {
      if (r.failure()?.errorText === 'csp') blockedByPolicy.push(r.url());
    });
    const response = await page.goto(`${ts.url}/docs`, { waitUntil: 'load', timeout: 60_000 });
    expect(response?.headers()['content-security-policy']).toContain("default-src 'self'");
    for (const name of ['List calls', 'Create a call', 'Send an SMS message', 'Buy a phone number']) {
      // Redoc renders each operation as an h2 headed by its summary.
      const heading = page
        .locator('h2')
        .filter({ hasText: new RegExp(`^${name}\\s*$`) })
        .first();
      await heading.waitFor({ state: 'visible', timeout: 60_000 });
      expect(await heading.isVisible(), name).toBe(true);
    }
    const shot = join(profileDir, 'docs.png');
    await page.screenshot({ path: shot, fullPage: false });
    expect((await stat(shot)).size).toBeGreaterThan(1000);
    expect(requested).toContain(`${ts.url}/openapi.json`);
    expect(refused).toEqual([]);
    expect(blockedByPolicy.every((u) => new URL(u).hostname === 'cdn.redoc.ly')).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('serves the error catalogue with an anchor per code', async () => {
    const page = await (context as BrowserContext).newPage();
    await page.goto(`${ts.url}/docs/errors#20404`, { waitUntil: 'load' });
    expect(await page.locator('[id="20404"]').textContent()).toContain('NotFound');
    expect(await page.locator('[id="13224"]').isVisible()).toBe(true);
    await page.close();
  });
});
