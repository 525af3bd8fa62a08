/**
 * `GET /metrics` on a real server behind METRICS_TOKEN: 401 without the bearer token or with a wrong
 * one; with it, an exposition a strict text-format parser accepts, carrying the series of a sipp call
 * (calls by direction and final status, setup time, SIP requests and responses both ways), of a
 * registration, of the markup webhook, SMS, media (endpoints, tick lateness) and the event loop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Family, parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { runSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

const TOKEN = 'scrape-token-for-tests';

let ts: TestServer;
let hooks: WebhookServer;
let owner: { sid: string; creds: Credentials };
let sipTarget: string;

beforeAll(async () => {
  ts = await startTestServer({ label: 'metrics', env: { METRICS_TOKEN: TOKEN } });
  hooks = await startWebhookServer();
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'metrics@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
  sipTarget = `127.0.0.1:${ts.server.sip!.stack.port}`;
});
afterAll(async () => {
  await hooks?.close();
  await ts?.dispose();
});

async function scrape(token: string | null = TOKEN) {
  const res = await fetch(`${ts.url}/metrics`, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function families(): Promise<Map<string, Family>> {
  const r = await scrape();
  expect(r.status).toBe(200);
  return parsePrometheusText(r.text);
}

describe('GET /metrics behind METRICS_TOKEN', () => {
  it('answers 401 without the token, with a wrong one, and with Basic credentials', async () => {
    const none = await scrape(null);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(none.text).not.toContain('switchboard_');
    expect((await scrape('wrong-token')).status).toBe(401);
    const basic = await fetch(`${ts.url}/metrics`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${owner.sid}:${owner.creds.secret}`).toString('base64')}`,
      },
    });
    expect(basic.status).toBe(401);
  });

  it('answers the text exposition format with the token', async () => {
    const r = await scrape();
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const f = parsePrometheusText(r.text);
    for (const name of f.keys()) expect(name).toMatch(/^switchboard_/);
    expect(f.get('switchboard_calls_started_total')?.type).toBe('counter');
    expect(f.get('switchboard_call_setup_seconds')?.type).toBe('histogram');
    expect(f.get('switchboard_sip_registered_endpoints')?.type).toBe('gauge');
    expect(f.get('switchboard_nodejs_eventloop_lag_seconds')?.type).toBe('gauge');
    expect(f.get('switchboard_media_endpoints')?.type).toBe('gauge');
    expect(sampleValue(f, 'switchboard_media_endpoints')).toBe(0);
    expect(
      sampleValue(f, 'switchboard_media_tick_late_seconds', { quantile: '0.99' }),
    ).toBeGreaterThanOrEqual(0);
    expect(sampleValue(f, 'switchboard_media_engine_restarts_total')).toBe(0);
    expect(f.get('switchboard_sms_outbound_total')?.type).toBe('counter');
    expect(f.get('switchboard_sms_status_total')?.type).toBe('counter');
  });

  it('counts a sipp call: legs by direction and status, setup time, SIP both ways, the webhook', async () => {
    const before = await families();
    const at = (f: Map<string, Family>, name: string, labels: Record<string, string>) =>
      sampleValue(f, name, labels) ?? 0;
    hooks.script('/voice', xml('<Say>Hello from the metrics test</Say><Hangup/>'));
    const number = '+15550309001';
    const n = await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
      auth: owner.creds,
      form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}/voice` },
    });
    expect(n.status).toBe(201);
    const r = await runSipp({ scenario: 'uac-call-expect-bye.xml', remote: sipTarget, service: number });
    expect(r.errors).toBe('');
    expect(r.code).toBe(0);

    const completed = { direction: 'inbound', status: 'completed' };
    const after = await until(families, (f) => at(f, 'switchboard_calls_ended_total', completed) >= 1);
    const delta = (name: string, labels: Record<string, string>) =>
      at(after, name, labels) - at(before, name, labels);

    expect(delta('switchboard_calls_started_total', { direction: 'inbound' })).toBe(1);
    expect(delta('switchboard_calls_ended_total', completed)).toBe(1);
    expect(at(after, 'switchboard_calls_active', { direction: 'inbound' })).toBe(0);
    expect(delta('switchboard_call_setup_seconds_count', { direction: 'inbound' })).toBe(1);
    expect(delta('switchboard_call_duration_seconds_count', { direction: 'inbound' })).toBe(1);
    // sipp's INVITE and ACK in, our BYE out; our 100/200 out, sipp's 200 to the BYE in.
    expect(
      delta('switchboard_sip_requests_total', { direction: 'in', method: 'INVITE' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      delta('switchboard_sip_requests_total', { direction: 'in', method: 'ACK' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      delta('switchboard_sip_requests_total', { direction: 'out', method: 'BYE' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      delta('switchboard_sip_responses_total', { direction: 'out', class: '2xx' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      delta('switchboard_sip_responses_total', { direction: 'in', class: '2xx' }),
    ).toBeGreaterThanOrEqual(1);
    expect(delta('switchboard_webhook_request_seconds_count', { outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(at(after, 'switchboard_media_endpoints', {})).toBe(0);
  });

  it('counts a webhook that fails by its kind', async () => {
    hooks.script('/broken', { status: 500 });
    const number = '+15550309002';
    await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
      auth: owner.creds,
      form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}/broken` },
    });
    const before =
      sampleValue(await families(), 'switchboard_webhook_failures_total', { kind: 'http-status' }) ?? 0;
    const r = await runSipp({ scenario: 'uac-call-expect-any-end.xml', remote: sipTarget, service: number });
    expect(r.code).not.toBeNull();
    const after = await until(
      families,
      (f) => (sampleValue(f, 'switchboard_webhook_failures_total', { kind: 'http-status' }) ?? 0) > before,
    );
    expect(sampleValue(after, 'switchboard_webhook_failures_total', { kind: 'http-status' })).toBeGreaterThan(
      before,
    );
    expect(
      sampleValue(after, 'switchboard_webhook_request_seconds_count', { outcome: 'failed' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('reports registered endpoints from the registrar', async () => {
    const login = 'metricsalice';
    const c = await ts.request('POST', `${API}/Accounts/${owner.sid}/Clients.json`, {
      auth: owner.creds,
      form: { Login: login, Password: 'alice-secret-1' },
    });
    expect(c.status).toBe(201);
    const r = await runSipp({
      scenario: 'uac-register-expect-200.xml',
      remote: sipTarget,
      service: login,
      auth: { user: login, password: 'alice-secret-1' },
      keys: { expires: '3600' },
    });
    expect(r.errors).toBe('');
    const f = await families();
    expect(sampleValue(f, 'switchboard_sip_registered_endpoints')).toBe(1);
    expect(
      sampleValue(f, 'switchboard_sip_requests_total', { direction: 'in', method: 'REGISTER' }),
    ).toBeGreaterThanOrEqual(2);
    expect(
      sampleValue(f, 'switchboard_sip_responses_total', { direction: 'out', class: '4xx' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('exposes the registry on the running server', async () => {
    const text = await ts.server.metrics.registry.metrics();
    expect(parsePrometheusText(text).has('switchboard_calls_started_total')).toBe(true);
  });
});
