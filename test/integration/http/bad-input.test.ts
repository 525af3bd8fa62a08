/**
 * Bad bytes and wrong media types on the REST API: NUL in form, query and path parameters and in
 * the Basic user, hostile profile JSON (NUL, lone surrogates, deep nesting) and non-form bodies on
 * form endpoints all get a 4xx in the error catalogue's shape, never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_MAX_DEPTH } from '../../../src/http/json-body.js';
import { API, type ApiResponse, startTestServer, type TestServer } from '../../support/server.js';

let ts: TestServer;
let schemaBase: string;
const platformCt = () => `application/instance+json;schema=${schemaBase}/rc-profile-schema.json`;

beforeAll(async () => {
  ts = await startTestServer({ label: 'badinput' });
  schemaBase = `${ts.url}${API}/Profiles/schemas`;
});
afterAll(async () => {
  await ts?.dispose();
});

/** The catalogue's error body (docs/errors.md) with the expected status and code. */
function expectError(res: ApiResponse, status: number, code: number, message?: RegExp) {
  expect(res.status, res.text).toBe(status);
  expect(res.json).toMatchObject({ code, status, more_info: expect.stringContaining(String(code)) });
  expect(typeof res.json.message).toBe('string');
  if (message) expect(res.json.message).toMatch(message);
}

describe('percent signs', () => {
  it('a literal % in a path sid is read once: 404 or 400, never 500', async () => {
    // The router decodes path parameters; a second decode of `%s%n` threw (a 500 the fuzzer found).
    const migrate = await ts.request('POST', `${API}/Accounts/migrate/%25s%25n%25x%25d.json`, {
      form: { Organization: 'default.switchboard.local' },
    });
    expect(migrate.status, migrate.text).toBeGreaterThanOrEqual(400);
    expect(migrate.status, migrate.text).toBeLessThan(500);
    const self = await ts.request('POST', `${API}/Accounts/%25zz.json`, { form: { FriendlyName: 'x' } });
    expect(self.status, self.text).toBe(404);
  });

  it('a LINK whose URL has a malformed escape: 400', async () => {
    const created = await ts.request('POST', `${API}/Profiles`, {
      headers: { 'content-type': platformCt() },
      body: JSON.stringify({}),
    });
    expect(created.status, created.text).toBe(201);
    const sid = (created.headers.get('location') as string).split('/').pop() as string;
    const res = await ts.request('PUT', `${API}/Profiles/${sid}`, {
      headers: {
        'X-HTTP-Method-Override': 'LINK',
        Link: `<${ts.url}${API}/Accounts/AC%zz>;rel=related`,
      },
    });
    expectError(res, 400, 21100, /percent-encoding/);
  });
});

describe('NUL bytes', () => {
  it('in a form parameter: 400 naming the parameter', async () => {
    const res = await ts.request('POST', `${API}/Accounts.json`, {
      form: { EmailAddress: 'nul@example.test', Password: 'password-123', FriendlyName: 'a\u0000b' },
    });
    expectError(res, 400, 21100, /FriendlyName/);
    const update = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}.json`, {
      form: { FriendlyName: '\u0000' },
    });
    expectError(update, 400, 21100, /FriendlyName/);
  });

  it('in a path sid: 400 naming the parameter', async () => {
    const res = await ts.request('GET', `${API}/Accounts/AC%00x.json`);
    expectError(res, 400, 21100, /accountSid/);
    const nested = await ts.request('GET', `${API}/Accounts/${ts.admin.sid}/Calls/CA%00.json`);
    expectError(nested, 400, 21100, /callSid/);
    const app = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}/Applications/AP%00.json`, {
      form: { FriendlyName: 'x' },
    });
    expectError(app, 400, 21100, /applicationSid/);
  });

  it('in a query parameter: 400 naming it', async () => {
    const res = await ts.request('GET', `${API}/Accounts/${ts.admin.sid}/Calls.json?To=%2B1%00`);
    expectError(res, 400, 21100, /To/);
  });

  it('in the Basic user: 401, not 500', async () => {
    for (const user of ['AC\u0000', 'x%00@example.test', 'a\u0000@example.test']) {
      const res = await ts.request('GET', `${API}/Accounts.json`, { auth: { user, secret: 'whatever-1' } });
      expectError(res, 401, 20003);
    }
  });
});

describe('profile JSON', () => {
  const post = (body: string) =>
    ts.request('POST', `${API}/Profiles`, { body, headers: { 'content-type': platformCt() } });

  it('NUL in a value or a member name: 400 naming the member', async () => {
    expectError(
      await post('{"featureEnablement":{"x":"a\\u0000b"}}'),
      400,
      21100,
      /featureEnablement\/x.*NUL/,
    );
    expectError(await post('{"featureEnablement":{"\\u0000":"b"}}'), 400, 21100, /NUL/);
  });

  it('lone surrogates: 400 naming the member', async () => {
    expectError(await post('{"featureEnablement":{"x":"\\ud800"}}'), 400, 21100, /featureEnablement\/x/);
    expectError(await post('{"featureEnablement":{"x":"a\\udc00b"}}'), 400, 21100, /surrogate/);
    // A proper pair is fine.
    expect((await post('{"featureEnablement":{"x":"\\ud83d\\ude00"}}')).status).toBe(201);
  });

  it('10,000 levels of nesting: 400 with the documented cap; the cap itself is accepted', async () => {
    const deep = (n: number) => `{"featureEnablement":{"x":${'['.repeat(n)}${']'.repeat(n)}}}`;
    expectError(await post(deep(10_000)), 400, 21102, new RegExp(`${JSON_MAX_DEPTH} levels`));
    expectError(await post(`${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`), 400, 21102);
    expect((await post(deep(JSON_MAX_DEPTH - 2))).status).toBe(201);
    // Brackets inside strings do not count.
    expect((await post(`{"featureEnablement":{"x":"${'['.repeat(200)}"}}`)).status).toBe(201);
  });

  it('deep ConfigurationData of the multi-provider extension: 400', async () => {
    const data = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const res = await ts.request('POST', `${API}/ExtensionsConfiguration.json`, {
      form: { ExtensionName: 'multiprovider', ConfigurationData: data, AccountSid: ts.admin.sid },
    });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe(21100);
  });
});

describe('content types on form endpoints', () => {
  it('a JSON body on create: 415 naming the accepted type (not a misleading 21101)', async () => {
    const res = await ts.request('POST', `${API}/Accounts.json`, {
      body: JSON.stringify({ EmailAddress: 'json@example.test', Password: 'password-123' }),
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 415, 20415, /application\/x-www-form-urlencoded/);
  });

  it('a JSON body on update: 415, and nothing changes', async () => {
    const before = await ts.request('GET', `${API}/Accounts/${ts.admin.sid}.json`);
    const res = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}.json`, {
      body: JSON.stringify({ FriendlyName: 'renamed by json' }),
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 415, 20415, /application\/x-www-form-urlencoded/);
    const after = await ts.request('GET', `${API}/Accounts/${ts.admin.sid}.json`);
    expect(after.json.friendly_name).toBe(before.json.friendly_name);
  });

  it('other types and a body without a type: 415; form bodies and empty bodies pass', async () => {
    for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x']) {
      const res = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}.json`, {
        body: 'FriendlyName=x',
        headers: { 'content-type': type },
      });
      expectError(res, 415, 20415);
    }
    const untyped = await fetch(`${ts.url}${API}/Accounts/${ts.admin.sid}.json`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${ts.admin.user}:${ts.admin.secret}`).toString('base64')}`,
      },
      body: new Uint8Array(Buffer.from('FriendlyName=x')),
    });
    expect(untyped.status).toBe(415);
    const form = await ts.request('POST', `${API}/Accounts/${ts.admin.sid}.json`, {
      form: { FriendlyName: 'form works' },
    });
    expect(form.status).toBe(200);
    expect((await ts.request('POST', `${API}/Accounts/${ts.admin.sid}.json`)).status).toBe(200);
  });
});
