/**
 * Headless Debian chromium driven by playwright-core, as the web-page tests use it: a fresh profile
 * per launch (removed on close) and, on request, every request off loopback refused and recorded, so
 * a test never reaches the network and can assert that a page asked nothing of a third party.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { missingToolMessage } from '../../ops/lib/tools.js';

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

export interface Chromium {
  readonly context: BrowserContext;
  /** The profile directory (a place for the run's own files, gone after close). */
  readonly profileDir: string;
  close(): Promise<void>;
}

/**
 * What the browser-phone tests add: the fake microphone (a beep tone) granted without asking, host
 * candidates on loopback for ICE, and the test's self-signed certificate on the WSS listener.
 */
export const WEBRTC_ARGS = [
  '--use-fake-ui-for-media-stream',
  '--use-fake-device-for-media-stream',
  '--allow-loopback-in-peer-connection',
  '--ignore-certificate-errors',
  '--autoplay-policy=no-user-gesture-required',
];

export async function launchChromium(
  opts: { viewport?: { width: number; height: number }; args?: readonly string[] } = {},
): Promise<Chromium> {
  const profileDir = await mkdtemp(join(tmpdir(), 'sb-chromium-'));
  let context: BrowserContext;
  try {
    // A persistent context is how playwright takes a user data dir (a fresh one per run).
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [...ARGS, ...(opts.args ?? [])],
      ...(opts.args?.includes('--ignore-certificate-errors') ? { ignoreHTTPSErrors: true } : {}),
      timeout: 60_000,
      ...(opts.viewport ? { viewport: opts.viewport } : {}),
    });
  } catch (e) {
    await rm(profileDir, { recursive: true, force: true });
    throw new Error(
      existsSync(CHROMIUM)
        ? `chromium did not start: ${(e as Error).message}`
        : missingToolMessage('chromium'),
    );
  }
  return {
    context,
    profileDir,
    async close() {
      await context.close();
      await rm(profileDir, { recursive: true, force: true });
    },
  };
}

/**
 * Lets requests to 127.0.0.1 through and aborts the rest; returns the list of refused URLs (filled
 * as the pages run). Routes added later (per page) take precedence over this one.
 */
export async function loopbackOnly(context: BrowserContext): Promise<string[]> {
  const refused: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).hostname === '127.0.0.1') return route.continue();
    refused.push(url);
    return route.abort();
  });
  return refused;
}
