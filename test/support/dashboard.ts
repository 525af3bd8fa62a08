/**
 * The supervisor dashboard as a person drives it: open `/dashboard` in a browser page (page errors
 * collected) and log in through its form.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from './server.js';

export async function openDashboard(
  context: BrowserContext,
  baseUrl: string,
): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const response = await page.goto(`${baseUrl}/dashboard`, { waitUntil: 'load' });
  expect(response?.status()).toBe(200);
  expect(response?.headers()['content-security-policy']).toContain("default-src 'self'");
  return { page, errors };
}

/** Fills the login form and waits for the board (the Super Admin unless told otherwise). */
export async function logIn(page: Page, user = ADMIN_EMAIL, secret = ADMIN_PASSWORD): Promise<void> {
  await fillLogin(page, user, secret);
  await page.locator('#board').waitFor({ state: 'visible' });
}

export async function fillLogin(page: Page, user: string, secret: string): Promise<void> {
  await page.getByLabel('Email or AccountSid').fill(user);
  await page.getByLabel('Password or AuthToken').fill(secret);
  await page.getByRole('button', { name: 'Log in' }).click();
}

/** A row's cell text, or null while the row is not there (never waits for it). */
export function cellText(page: Page, column: number, row = 0): Promise<string | null> {
  return page
    .locator('#calls tbody tr')
    .nth(row)
    .locator('td')
    .nth(column)
    .textContent({ timeout: 500 })
    .catch(() => null);
}
