/**
 * SMS and SMPP in `/metrics` and `/ready` against a local SMSC: outbound messages counted as sent
 * (submitted), then delivered or undelivered by their receipts; the link's state and window series;
 * `/ready` listing the SMPP connection (reported, not required: the node stays ready when the SMSC
 * goes away, and the link's state series says so).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadinessReport } from '../../../src/metrics/readiness.js';
import { type Family, parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';
import { until } from '../../support/until.js';
import { type SmsWorld, SYSTEM_ID, startSmsWorld, stopSmsWorld } from '../sms/support.js';

let w: SmsWorld;

beforeAll(async () => {
  w = await startSmsWorld({ label: 'smsmetrics' });
});
afterAll(async () => {
  await stopSmsWorld(w);
});

async function scrape(): Promise<Map<string, Family>> {
  const res = await fetch(`${w.ts.url}/metrics`);
  expect(res.status).toBe(200);
  return parsePrometheusText(await res.text());
}

async function ready(): Promise<{ status: number; body: ReadinessReport }> {
  const res = await fetch(`${w.ts.url}/ready`);
  return { status: res.status, body: (await res.json()) as ReadinessReport };
}

const status = (f: Map<string, Family>, s: string) =>
  sampleValue(f, 'switchboard_sms_status_total', { status: s }) ?? 0;

describe('SMS and SMPP series', () => {
  it('counts outbound messages as sent, then delivered or undelivered, and shows the bound link', async () => {
    w.smsc.behaviour.receiptDelayMs = 50;
    w.smsc.behaviour.receiptStat = (dest) => (dest.endsWith('99') ? 'UNDELIV' : 'DELIVRD');
    for (const to of ['+15551230010', '+15551230099']) {
      const r = await w.ts.request('POST', `${w.base}.json`, {
        auth: w.owner.creds,
        form: { From: w.number, To: to, Body: 'metrics' },
      });
      expect(r.status).toBe(201);
    }
    const f = await until(scrape, (m) => status(m, 'delivered') >= 1 && status(m, 'undelivered') >= 1);
    expect(status(f, 'sent')).toBe(2);
    expect(status(f, 'delivered')).toBe(1);
    expect(status(f, 'undelivered')).toBe(1);
    expect(sampleValue(f, 'switchboard_sms_outbound_total')).toBe(2);
    const link = f.get('switchboard_smpp_link_state')!.samples.find((s) => s.labels.state === 'bound');
    expect(link?.labels.link).toMatch(new RegExp(`^${SYSTEM_ID}@127\\.0\\.0\\.1:\\d+$`));
    expect(link?.value).toBe(1);
    expect(sampleValue(f, 'switchboard_smpp_window_outstanding', { link: link!.labels.link! })).toBe(0);
  });

  it('/ready lists the SMPP connection, and stays 200 when the SMSC goes away', async () => {
    const up = await ready();
    expect(up.status).toBe(200);
    expect(up.body.checks.smpp).toMatchObject({ status: 'up', required: false });
    expect(Object.values(up.body.checks.smpp?.parts ?? {})).toEqual(['bound']);

    await w.smsc.close();
    const down = await until(ready, (r) => r.body.checks.smpp?.status === 'down');
    expect(down.status).toBe(200);
    expect(down.body.status).toBe('ready');
    expect(down.body.checks.smpp?.status).toBe('down');
    const f = await scrape();
    expect(sampleValue(f, 'switchboard_smpp_link_state', { state: 'bound' })).toBe(0);
  });
});
