/**
 * Live calls: a REST redirect mid-call, a Dial Conference with three callers
 * with Mute through the REST API, CANCEL while the markup is being fetched, and a BYE racing a REST
 * hangup ending the call once (one record, one completed callback).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, startTestServer, type TestServer } from '../../support/server.js';
import { runSipp, startSipp } from '../../support/sipp.js';
import { until, markup as xml } from '../../support/until.js';
import { startWebhookServer, type WebhookServer } from '../../support/webhook-server.js';

let ts: TestServer;
let hooks: WebhookServer;
let owner: { sid: string; creds: Credentials };
let target: string;
let seq = 100;

beforeAll(async () => {
  ts = await startTestServer({ label: 'livecalls' });
  hooks = await startWebhookServer();
  hooks.script('/status', { status: 204 });
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: ts.admin,
    form: { EmailAddress: 'live@example.test', Password: 'password-123', Role: 'Developer' },
  });
  owner = { sid: r.json.sid, creds: { user: r.json.sid, secret: r.json.auth_token } };
  target = `127.0.0.1:${ts.server.sip!.stack.port}`;
});
afterAll(async () => {
  await hooks?.close();
  await ts?.dispose();
});

async function numberFor(path: string, extra: Record<string, string> = {}): Promise<string> {
  const number = `+1555030${String(seq++).padStart(4, '0')}`;
  const r = await ts.request('POST', `${API}/Accounts/${owner.sid}/IncomingPhoneNumbers.json`, {
    auth: owner.creds,
    form: { PhoneNumber: number, VoiceUrl: `${hooks.origin}${path}`, ...extra },
  });
  expect(r.status).toBe(201);
  return number;
}

const callsTo = async (to: string) =>
  (
    await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls.json?To=${encodeURIComponent(to)}`, {
      auth: owner.creds,
    })
  ).json.calls as Array<{ sid: string; status: string }>;

const modify = (sid: string, form: Record<string, string>) =>
  ts.request('POST', `${API}/Accounts/${owner.sid}/Calls/${sid}.json`, { auth: owner.creds, form });

describe('live calls', () => {
  it('a REST redirect replaces the running markup at once', async () => {
    hooks.script('/hold', xml('<Pause length="20"/>'));
    hooks.script('/redirected', xml('<Hangup/>'));
    const number = await numberFor('/hold');
    const caller = await startSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: number });
    const [call] = await until(
      () => callsTo(number),
      (l) => l[0]?.status === 'in-progress',
    );
    const r = await modify(call!.sid, { Url: `${hooks.origin}/redirected`, Method: 'POST' });
    expect(r.status).toBe(200);
    const result = await caller.done;
    expect(result.errors).toBe('');
    expect(hooks.requestsTo('/redirected')).toHaveLength(1);
    expect(
      await until(
        async () => (await callsTo(number))[0]?.status,
        (s) => s === 'completed',
      ),
    ).toBe('completed');
  });

  it('three callers in one conference; Mute through the API reports the conference', async () => {
    hooks.script('/conf', xml('<Dial><Conference beep="false">standup</Conference></Dial>'));
    const number = await numberFor('/conf');
    const callers = [];
    for (let i = 0; i < 3; i++)
      callers.push(
        await startSipp({
          scenario: 'uac-call-then-hangup.xml',
          remote: target,
          service: number,
          extra: ['-d', '4000'],
        }),
      );
    const live = await until(
      () => callsTo(number),
      (l) => l.filter((c) => c.status === 'in-progress').length === 3,
    );
    expect(live.filter((c) => c.status === 'in-progress')).toHaveLength(3);
    // Let the last one reach the mixer.
    await new Promise((r) => setTimeout(r, 300));
    const muted = await modify(live[0]!.sid, { Mute: 'true' });
    expect(muted.status).toBe(200);
    expect(muted.json).toMatchObject({ muted: true, hold: false });
    expect(muted.json.conference_sid).toMatch(/^CF[0-9a-f]{32}$/);
    const other = await modify(live[1]!.sid, { Mute: 'false' });
    expect(other.json.conference_sid).toBe(muted.json.conference_sid);
    for (const c of callers) expect((await c.done).errors).toBe('');
  });

  it('Conference startConferenceOnEnter=false waits for the moderator; its endConferenceOnEnter ends the room', async () => {
    hooks.script(
      '/waiter',
      xml(
        '<Dial action="/conf-over"><Conference beep="false" startConferenceOnEnter="false">town</Conference></Dial>',
      ),
    );
    hooks.script('/conf-over', xml('<Hangup/>'));
    hooks.script(
      '/moderator',
      xml('<Dial><Conference beep="false" endConferenceOnEnter="true">town</Conference></Dial>'),
    );
    const waiterNumber = await numberFor('/waiter');
    const moderatorNumber = await numberFor('/moderator');
    // The waiter stays until we end it; the moderator hangs up 3 s after its call is answered.
    const waiter = await startSipp({
      scenario: 'uac-call-expect-bye.xml',
      remote: target,
      service: waiterNumber,
    });
    const [w] = await until(
      () => callsTo(waiterNumber),
      (l) => l[0]?.status === 'in-progress',
    );
    await new Promise((r) => setTimeout(r, 500));
    // Not in the mixer while the conference has not started.
    expect((await modify(w!.sid, { Mute: 'false' })).json.conference_sid).toBeNull();
    const moderator = await startSipp({
      scenario: 'uac-call-then-hangup.xml',
      remote: target,
      service: moderatorNumber,
      extra: ['-d', '3000'],
    });
    const joined = await until(
      async () => (await modify(w!.sid, { Mute: 'false' })).json.conference_sid,
      (sid) => typeof sid === 'string',
    );
    expect(joined).toMatch(/^CF[0-9a-f]{32}$/);
    // The Mute response reports the participant's own attributes.
    expect((await modify(w!.sid, { Mute: 'false' })).json).toMatchObject({
      start_conference_on_enter: false,
      end_conference_on_enter: false,
    });
    const [m] = await until(
      () => callsTo(moderatorNumber),
      (l) => l[0]?.status === 'in-progress',
    );
    expect((await modify(m!.sid, { Mute: 'false' })).json).toMatchObject({
      start_conference_on_enter: true,
      end_conference_on_enter: true,
    });
    expect((await moderator.done).errors).toBe('');
    // The moderator left: the waiter's Dial ends, its action runs and hangs it up.
    expect((await waiter.done).errors).toBe('');
    const [over] = hooks.requestsTo('/conf-over').map((q) => new URLSearchParams(q.rawBody.toString()));
    expect(over?.get('CallSid')).toBe(w!.sid);
    expect(over?.get('DialCallStatus')).toBe('completed');
  });

  it('CANCEL while the markup is being fetched: canceled, nothing answered', async () => {
    hooks.script('/slow', xml('<Say>too late</Say>', 1500));
    const number = await numberFor('/slow');
    const caller = await startSipp({
      scenario: 'uac-cancel-expect-487.xml',
      remote: target,
      service: number,
    });
    const result = await caller.done;
    expect(result.errors).toBe('');
    expect(
      await until(
        async () => (await callsTo(number))[0]?.status,
        (s) => s === 'canceled',
      ),
    ).toBe('canceled');
  });

  it('a BYE and a REST hangup together: one terminal status, one completed callback', async () => {
    hooks.script('/hold2', xml('<Pause length="20"/>'));
    const number = await numberFor('/hold2', { StatusCallback: `${hooks.origin}/status` });
    const caller = await startSipp({
      scenario: 'uac-call-then-hangup.xml',
      remote: target,
      service: number,
      extra: ['-d', '1000'],
    });
    const [call] = await until(
      () => callsTo(number),
      (l) => l[0]?.status === 'in-progress',
    );
    // Fire REST hangups around the moment the caller's BYE leaves (1 s after its ACK).
    await new Promise((r) => setTimeout(r, 850));
    const shots = [];
    for (let i = 0; i < 10; i++) {
      shots.push(modify(call!.sid, { Status: 'completed' }));
      await new Promise((r) => setTimeout(r, 40));
    }
    const statuses = (await Promise.all(shots)).map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    await caller.done;
    await until(
      async () => (await callsTo(number))[0]?.status,
      (s) => s === 'completed',
    );
    await new Promise((r) => setTimeout(r, 500));
    const completed = hooks
      .requestsTo('/status')
      .map((q) => new URLSearchParams(q.rawBody.toString()))
      .filter((f) => f.get('CallSid') === call!.sid && f.get('CallStatus') === 'completed');
    expect(completed).toHaveLength(1);
    expect(await callsTo(number)).toHaveLength(1);
  });

  it('MoveConnectedCallLeg moves both legs of a Dial to the new markup', async () => {
    const callee = await startSipp({ scenario: 'uas-answer-expect-bye.xml', localIp: '127.0.0.3' });
    hooks.script('/bridge', xml(`<Dial><Sip>sip:bob@127.0.0.3:${callee.localPort}</Sip></Dial>`));
    hooks.script('/moved', xml('<Pause length="1"/><Hangup/>'));
    const number = await numberFor('/bridge');
    const caller = await startSipp({ scenario: 'uac-call-expect-bye.xml', remote: target, service: number });
    const [call] = await until(
      () => callsTo(number),
      (l) => l[0]?.status === 'in-progress',
    );
    const child = await until(
      async () =>
        (
          await ts.request('GET', `${API}/Accounts/${owner.sid}/Calls.json?ParentCallSid=${call!.sid}`, {
            auth: owner.creds,
          })
        ).json.calls as Array<{ sid: string; status: string }>,
      (l) => l[0]?.status === 'in-progress',
    );
    expect(child[0]?.status).toBe('in-progress');
    const r = await modify(call!.sid, { Url: `${hooks.origin}/moved`, MoveConnectedCallLeg: 'true' });
    expect(r.status).toBe(200);
    expect((await caller.done).errors).toBe('');
    expect((await callee.done).errors).toBe('');
    const moved = hooks
      .requestsTo('/moved')
      .map((q) => new URLSearchParams(q.rawBody.toString()).get('CallSid'));
    expect(new Set(moved)).toEqual(new Set([call!.sid, child[0]!.sid]));
  });

  it('calls to a number of a suspended account are refused (403)', async () => {
    hooks.script('/never-runs', xml('<Hangup/>'));
    const sub = await ts.request('POST', `${API}/Accounts.json`, {
      auth: ts.admin,
      form: { EmailAddress: 'suspended@example.test', Password: 'password-123', Role: 'Developer' },
    });
    const subCreds = { user: sub.json.sid, secret: sub.json.auth_token };
    const n = await ts.request('POST', `${API}/Accounts/${sub.json.sid}/IncomingPhoneNumbers.json`, {
      auth: subCreds,
      form: { PhoneNumber: '+15550309999', VoiceUrl: `${hooks.origin}/never-runs` },
    });
    expect(n.status).toBe(201);
    const s = await ts.request('POST', `${API}/Accounts/${sub.json.sid}.json`, {
      auth: ts.admin,
      form: { Status: 'suspended' },
    });
    expect(s.json.status).toBe('suspended');
    const r = await runSipp({ scenario: 'uac-call-expect-403.xml', remote: target, service: '+15550309999' });
    expect(r.errors).toBe('');
    expect(hooks.requestsTo('/never-runs')).toHaveLength(0);
  });
});
