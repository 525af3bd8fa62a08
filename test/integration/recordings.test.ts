/** Recordings over HTTP: list/sort/filter, get, delete rules, public `.wav` with byte ranges. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import wavefile from 'wavefile';
import { API, type Credentials, startTestServer, type TestServer } from '../support/server.js';

let ts: TestServer;
let owner: { sid: string; creds: Credentials };
let agent: { sid: string; creds: Credentials };
const base = () => `${API}/Accounts/${owner.sid}/Recordings`;
const as = (opts: Parameters<TestServer['request']>[2] = {}) => ({ auth: owner.creds, ...opts });

function tone(seconds: number): Buffer {
  const samples = new Int16Array(8000 * seconds);
  for (let i = 0; i < samples.length; i++)
    samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  const wav = new wavefile.WaveFile();
  wav.fromScratch(1, 8000, '16', samples);
  return Buffer.from(wav.toBuffer());
}

const sids: string[] = [];

beforeAll(async () => {
  ts = await startTestServer({ label: 'recordings' });
  const res = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: 'rec@example.test', Password: 'password-123', Role: 'Administrator' },
  });
  owner = { sid: res.json.sid, creds: { user: res.json.sid, secret: res.json.auth_token } };
  const pa = await ts.request('POST', `${API}/Accounts.json`, {
    auth: owner.creds,
    form: { EmailAddress: 'agent@example.test', Password: 'password-123', Role: 'ProvisioningAgent' },
  });
  agent = { sid: pa.json.sid, creds: { user: pa.json.sid, secret: pa.json.auth_token } };
  for (const [i, d] of [3, 1, 2].entries()) {
    const rec = await ts.server.recordings.create({
      accountSid: owner.sid,
      callSid: i === 0 ? 'CA000000000000000000000000000000bb' : 'CA000000000000000000000000000000aa',
      durationSeconds: d,
      wav: tone(d),
    });
    sids.push(rec.sid);
    await new Promise((r) => setTimeout(r, 5));
  }
});
afterAll(async () => {
  await ts?.dispose();
});

describe('Recordings', () => {
  it('lists with the envelope and sorts by Duration, DateCreated and CallSid both ways', async () => {
    const list = await ts.request('GET', `${base()}.json`, as());
    expect(list.json).toMatchObject({ total: 3, page: 0, num_pages: 0, page_size: 50 });
    expect(list.json.recordings[0]).toMatchObject({ account_sid: owner.sid, api_version: '2012-04-24' });
    expect(list.json.recordings[0].file_uri).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/2012-04-24\/Accounts\/AC[0-9a-f]{32}\/Recordings\/RE[0-9a-f]{32}\.wav$/,
    );
    const byDur = await ts.request('GET', `${base()}.json?SortBy=Duration:asc`, as());
    expect(byDur.json.recordings.map((r: { duration: number }) => r.duration)).toEqual([1, 2, 3]);
    const byDurDesc = await ts.request('GET', `${base()}.json?SortBy=Duration:desc`, as());
    expect(byDurDesc.json.recordings.map((r: { duration: number }) => r.duration)).toEqual([3, 2, 1]);
    const byDate = await ts.request('GET', `${base()}.json?SortBy=DateCreated:desc`, as());
    expect(byDate.json.recordings.map((r: { sid: string }) => r.sid)).toEqual([...sids].reverse());
    const byCall = await ts.request('GET', `${base()}.json?SortBy=CallSid:asc`, as());
    expect(byCall.json.recordings.at(-1).call_sid).toBe('CA000000000000000000000000000000bb');
    expect((await ts.request('GET', `${base()}.json?SortBy=Size:asc`, as())).status).toBe(400);
  });

  it('filters by CallSid and dates, and per call', async () => {
    expect(
      (await ts.request('GET', `${base()}.json?CallSid=CA000000000000000000000000000000aa`, as())).json.total,
    ).toBe(2);
    const perCall = await ts.request(
      'GET',
      `${API}/Accounts/${owner.sid}/Calls/CA000000000000000000000000000000bb/Recordings.json`,
      as(),
    );
    expect(perCall.json.recordings.map((r: { sid: string }) => r.sid)).toEqual([sids[0]]);
    expect((await ts.request('GET', `${base()}.json?StartTime=2999-01-01`, as())).json.total).toBe(0);
  });

  it('the list needs credentials; the .wav does not, with Content-Type, Content-Length and ranges', async () => {
    expect((await ts.request('GET', `${base()}.json`, { auth: null })).status).toBe(401);
    const url = `${ts.url}${base()}/${sids[1]}.wav`;
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('audio/x-wav');
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const body = Buffer.from(await whole.arrayBuffer());
    expect(Number(whole.headers.get('content-length'))).toBe(body.length);
    expect(body.subarray(0, 4).toString()).toBe('RIFF');
    const decoded = new wavefile.WaveFile(body);
    expect((decoded.fmt as { sampleRate: number }).sampleRate).toBe(8000);
    const part = await fetch(url, { headers: { range: 'bytes=0-3' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-3/${body.length}`);
    expect(Buffer.from(await part.arrayBuffer()).toString()).toBe('RIFF');
    const tail = await fetch(url, { headers: { range: 'bytes=-10' } });
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(body.subarray(body.length - 10));
    const bad = await fetch(url, { headers: { range: `bytes=${body.length + 5}-` } });
    expect(bad.status).toBe(416);
    expect(bad.headers.get('content-range')).toBe(`bytes */${body.length}`);
    expect((await fetch(`${ts.url}${base()}/RE00000000000000000000000000000000.wav`)).status).toBe(404);
    expect((await fetch(`${ts.url}${API}/Accounts/${agent.sid}/Recordings/${sids[1]}.wav`)).status).toBe(404);
  });

  it('a ProvisioningAgent may not delete; the owner deletes (204) and the audio is gone', async () => {
    const denied = await ts.request('DELETE', `${API}/Accounts/${owner.sid}/Recordings/${sids[2]}.json`, {
      auth: agent.creds,
    });
    expect(denied.status).toBe(404); // the parent's recordings are outside its scope
    const rec = await ts.server.recordings.create({
      accountSid: agent.sid,
      callSid: null,
      durationSeconds: 1,
      wav: tone(1),
    });
    const forbidden = await ts.request('DELETE', `${API}/Accounts/${agent.sid}/Recordings/${rec.sid}.json`, {
      auth: agent.creds,
    });
    expect(forbidden.status).toBe(403);
    const del = await ts.request('DELETE', `${base()}/${sids[2]}.json`, as());
    expect(del.status).toBe(204);
    expect((await ts.request('GET', `${base()}/${sids[2]}.json`, as())).status).toBe(404);
    expect((await fetch(`${ts.url}${base()}/${sids[2]}.wav`)).status).toBe(404);
  });
});
