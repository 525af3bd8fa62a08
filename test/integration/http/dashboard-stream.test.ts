/**
 * The dashboard's stream client against the stream protocol (issue 16: a `snapshot`, then deltas
 * with a rising `seq`; `?ticket=` from `POST …/Supervisor.json/tickets`; `since=<seq>` to resume),
 * played by the test through playwright's WebSocket routing, while the rest of the page talks to a
 * real server: the page follows the snapshot and deltas, ignores a replayed event, resumes a
 * dropped stream with a fresh ticket and the last seq, and polls once reconnecting keeps failing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chromium, launchChromium, loopbackOnly } from '../../support/browser.js';
import { cellText, logIn, openDashboard as open } from '../../support/dashboard.js';
import { API, startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
let browser: Chromium | undefined;

beforeAll(async () => {
  ts = await startTestServer({ label: 'dashstream' });
  browser = await launchChromium();
  await loopbackOnly(browser.context);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await ts?.dispose();
});

const openDashboard = () => open((browser as Chromium).context, ts.url);

describe('/dashboard on the Supervisor stream', () => {
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
    await expect.poll(() => cellText(page, 4)).toMatch(/^1:0\d$/);
    expect(await row.locator('td').nth(5).textContent()).toBe('Dial');
    expect(await page.locator('[data-metric="RegisteredUsers"]').textContent()).toBe('2');

    const at = Date.now();
    send({
      type: 'call.updated',
      seq: 8,
      at,
      call: { sid: 'CA00000000000000000000000000000001', bridgedWith: 'CA00000000000000000000000000000002' },
    });
    await expect.poll(() => cellText(page, 6)).toBe('CA00000000000000000000000000000002');
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
});
