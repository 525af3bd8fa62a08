/**
 * The Prometheus adapter's meters and scrape-time sources, read back through the strict text parser:
 * SIP methods outside the known set fold into OTHER and statuses into classes (so a peer cannot mint
 * label values), webhook failures count by kind, and a failing or hung source keeps the scrape alive.
 */
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/metrics/prometheus.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';

async function scrape(m: ReturnType<typeof createMetrics>) {
  return parsePrometheusText((await m.exposition()).body);
}

describe('createMetrics', () => {
  it('folds SIP methods and statuses into small closed label sets', async () => {
    const m = createMetrics();
    m.sip.request('in', 'INVITE');
    m.sip.request('in', 'X-EVIL-METHOD');
    m.sip.request('out', 'BYE');
    m.sip.response('out', 180);
    m.sip.response('out', 200);
    m.sip.response('in', 486);
    m.sip.response('in', 999);
    const f = await scrape(m);
    expect(sampleValue(f, 'switchboard_sip_requests_total', { direction: 'in', method: 'INVITE' })).toBe(1);
    expect(sampleValue(f, 'switchboard_sip_requests_total', { direction: 'in', method: 'OTHER' })).toBe(1);
    expect(sampleValue(f, 'switchboard_sip_requests_total', { direction: 'out', method: 'BYE' })).toBe(1);
    expect(sampleValue(f, 'switchboard_sip_responses_total', { direction: 'out', class: '1xx' })).toBe(1);
    expect(sampleValue(f, 'switchboard_sip_responses_total', { direction: 'out', class: '2xx' })).toBe(1);
    expect(sampleValue(f, 'switchboard_sip_responses_total', { direction: 'in', class: '4xx' })).toBe(1);
    expect(sampleValue(f, 'switchboard_sip_responses_total', { direction: 'in', class: 'invalid' })).toBe(1);
    const methods = new Set(f.get('switchboard_sip_requests_total')!.samples.map((s) => s.labels.method));
    expect(methods.has('X-EVIL-METHOD')).toBe(false);
  });

  it('records webhook latency by outcome and failures by kind', async () => {
    const m = createMetrics();
    m.webhooks.delivered(0.02, null);
    m.webhooks.delivered(1.5, 'timeout');
    const f = await scrape(m);
    expect(sampleValue(f, 'switchboard_webhook_request_seconds_count', { outcome: 'ok' })).toBe(1);
    expect(sampleValue(f, 'switchboard_webhook_request_seconds_count', { outcome: 'failed' })).toBe(1);
    expect(sampleValue(f, 'switchboard_webhook_failures_total', { kind: 'timeout' })).toBe(1);
  });

  it('counts calls and verbs by their labels, each label set its own series', async () => {
    const m = createMetrics();
    m.calls.callStarted('inbound');
    m.calls.callStarted('inbound');
    m.calls.callStarted('outbound-api');
    m.calls.callAnswered('inbound', 0.25);
    m.calls.callEnded('inbound', 'completed', 12, true);
    m.calls.callEnded('outbound-api', 'busy', 0, false);
    m.calls.verbFinished('Pause', 'ok');
    m.calls.verbFinished('Pause', 'ok');
    m.calls.verbFinished('Say', 'failed');
    const f = await scrape(m);
    expect(sampleValue(f, 'switchboard_calls_started_total', { direction: 'inbound' })).toBe(2);
    expect(sampleValue(f, 'switchboard_calls_started_total', { direction: 'outbound-api' })).toBe(1);
    expect(sampleValue(f, 'switchboard_calls_active', { direction: 'inbound' })).toBe(1);
    expect(sampleValue(f, 'switchboard_calls_active', { direction: 'outbound-api' })).toBe(1);
    expect(sampleValue(f, 'switchboard_call_setup_seconds_count', { direction: 'inbound' })).toBe(1);
    expect(sampleValue(f, 'switchboard_call_setup_seconds_sum', { direction: 'inbound' })).toBe(0.25);
    expect(
      sampleValue(f, 'switchboard_calls_ended_total', { direction: 'inbound', status: 'completed' }),
    ).toBe(1);
    expect(
      sampleValue(f, 'switchboard_calls_ended_total', { direction: 'outbound-api', status: 'busy' }),
    ).toBe(1);
    expect(sampleValue(f, 'switchboard_call_duration_seconds_sum', { direction: 'inbound' })).toBe(12);
    expect(
      sampleValue(f, 'switchboard_call_duration_seconds_count', { direction: 'outbound-api' }),
    ).toBeUndefined();
    expect(sampleValue(f, 'switchboard_verbs_total', { verb: 'Pause', outcome: 'ok' })).toBe(2);
    expect(sampleValue(f, 'switchboard_verbs_total', { verb: 'Say', outcome: 'failed' })).toBe(1);
  });

  it('asks the media engine once per scrape for its load, and reports nothing while it is down', async () => {
    const m = createMetrics();
    let queries = 0;
    let up = true;
    m.observe({
      mediaLoad: async () => {
        queries++;
        return up
          ? { tickLateP50Ms: 1, tickLateP99Ms: 4, tickLateMaxMs: 9, cpuPercent: 25, restarts: 2 }
          : null;
      },
    });
    let f = await scrape(m);
    expect(queries).toBe(1);
    expect(sampleValue(f, 'switchboard_media_tick_late_seconds', { quantile: '0.99' })).toBe(0.004);
    expect(sampleValue(f, 'switchboard_media_tick_late_seconds', { quantile: '1' })).toBe(0.009);
    expect(sampleValue(f, 'switchboard_media_engine_cpu_ratio')).toBe(0.25);
    expect(sampleValue(f, 'switchboard_media_engine_restarts_total')).toBe(2);
    await new Promise((r) => setImmediate(r));
    up = false;
    f = await scrape(m);
    expect(queries).toBe(2);
    expect(sampleValue(f, 'switchboard_media_engine_restarts_total')).toBe(2);
  });

  it('reads sources at scrape time; a failing or hung source keeps its last value', async () => {
    const m = createMetrics();
    let registered: () => Promise<number> = async () => 3;
    let outbound = 1;
    m.observe({
      registeredEndpoints: () => registered(),
      sms: () => ({
        inbound: { app: 2, not_found: 1 },
        outbound,
        outcomes: { sent: 1, delivered: 1, undelivered: 0, failed: 0 },
      }),
      mediaEndpoints: () => 4,
      smppLinks: () => [{ name: 'sys@smsc:2775', state: 'bound', outstanding: 2 }],
    });
    let f = await scrape(m);
    expect(sampleValue(f, 'switchboard_sip_registered_endpoints')).toBe(3);
    expect(sampleValue(f, 'switchboard_sms_inbound_total', { route: 'app' })).toBe(2);
    expect(sampleValue(f, 'switchboard_sms_outbound_total')).toBe(1);
    expect(sampleValue(f, 'switchboard_sms_status_total', { status: 'delivered' })).toBe(1);
    expect(sampleValue(f, 'switchboard_media_endpoints')).toBe(4);
    expect(sampleValue(f, 'switchboard_smpp_link_state', { link: 'sys@smsc:2775', state: 'bound' })).toBe(1);
    expect(
      sampleValue(f, 'switchboard_smpp_link_state', { link: 'sys@smsc:2775', state: 'connecting' }),
    ).toBe(0);
    expect(sampleValue(f, 'switchboard_smpp_window_outstanding', { link: 'sys@smsc:2775' })).toBe(2);

    outbound = 5;
    registered = () => Promise.reject(new Error('redis down'));
    f = await scrape(m);
    expect(sampleValue(f, 'switchboard_sms_outbound_total')).toBe(5);
    expect(sampleValue(f, 'switchboard_sip_registered_endpoints')).toBe(3);

    registered = () => new Promise<number>(() => {});
    const started = Date.now();
    f = await scrape(m);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(sampleValue(f, 'switchboard_sip_registered_endpoints')).toBe(3);
  });
});
