/**
 * The sample web phone (`/phone`) as a person drives it: open it, register as a Client, call,
 * answer. Page errors are collected so a test can assert there were none.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';

export interface PhonePage {
  readonly page: Page;
  readonly errors: string[];
}

export async function openPhone(context: BrowserContext, baseUrl: string): Promise<PhonePage> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const response = await page.goto(`${baseUrl}/phone`, { waitUntil: 'load' });
  expect(response?.status()).toBe(200);
  // The form is filled from config.json once the module has run.
  await expect.poll(() => page.getByLabel('Server').inputValue()).not.toBe('');
  return { page, errors };
}

/** Fills the account form and presses Register (the outcome shows in #registration). */
export async function register(page: Page, login: string, password: string): Promise<void> {
  await page.getByLabel('Login').fill(login);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Register', exact: true }).click();
}

export const registrationText = (page: Page) => page.locator('#registration').textContent();
export const callState = (page: Page) => page.locator('#call-state').textContent();

export async function dial(page: Page, target: string): Promise<void> {
  await page.getByLabel('Call').fill(target);
  await page.getByRole('button', { name: 'Call', exact: true }).click();
}
