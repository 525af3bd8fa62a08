/**
 * Accounts over real HTTP against real Postgres and Redis: wire forms, authentication, roles,
 * restart and bad input. Changes of whole sub-account trees (status cascade, migration) are in
 * accounts-tree.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, type Credentials, httpRequest, startTestServer, type TestServer } from '../support/server.js';
import { XMLParser } from '../support/xml.js';

let ts: TestServer;
const xml = new XMLParser();

async function createAccount(
  as: Credentials,
  form: Record<string, string>,
): Promise<{ sid: string; creds: Credentials; email: string }> {
  const res = await ts.request('POST', `${API}/Accounts.json`, { auth: as, form });
  expect(res.status, res.text).toBe(201);
  return {
    sid: res.json.sid,
    creds: { user: res.json.sid, secret: res.json.auth_token },
    email: res.json.email_address,
  };
}

let seq = 0;
const email = (tag: string) => `${tag}-${++seq}@example.test`;

beforeAll(async () => {
  ts = await startTestServer({ label: 'accounts' });
});
afterAll(async () => {
  await ts?.dispose();
});

describe('wire forms', () => {
  it('creates and reads an account in JSON, with both .json path forms', async () => {
    const a = await createAccount(ts.admin, {
      EmailAddress: email('json'),
      Password: 'password-123',
      Role: 'Developer',
    });
    const r1 = await ts.request('GET', `${API}/Accounts/${a.sid}.json`);
    const r2 = await ts.request('GET', `${API}/Accounts.json/${a.sid}`);
    expect(r1.status).toBe(200);
    expect(r1.headers.get('content-type')).toMatch(/application\/json/);
    expect(r2.json).toEqual(r1.json);
    expect(r1.json).toMatchObject({
      sid: a.sid,
      friendly_name: a.email,
      email_address: a.email,
      status: 'active',
      role: 'Developer',
      type: 'Full',
      parent_sid: ts.admin.sid,
      uri: `${API}/Accounts/${a.sid}.json`,
    });
    expect(r1.json.sid).toMatch(/^AC[0-9a-f]{32}$/);
    expect(r1.json.date_created).toMatch(
      /^[A-Z][a-z]{2}, \d{1,2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} \+0000$/,
    );
    expect(r1.json.subresource_uris.sms_messages).toBe(`${API}/Accounts/${a.sid}/SMS/Messages.json`);
    expect(r1.json.subresource_uris.calls).toBe(`${API}/Accounts/${a.sid}/Calls.json`);
    expect(r1.headers.get('link')).toMatch(
      /^<http:\/\/[^>]+\/2012-04-24\/Profiles\/PR[0-9a-f]{32}>; rel="related"$/,
    );
  });

  it('renders the same account in XML under <ServiceResponse>', async () => {
    const a = await createAccount(ts.admin, {
      EmailAddress: email('xml'),
      Password: 'password-123',
      FriendlyName: 'A & B <x>',
    });
    const res = await ts.request('GET', `${API}/Accounts/${a.sid}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/xml/);
    const doc = xml.parse(res.text);
    expect(doc.ServiceResponse.Account.Sid).toBe(a.sid);
    expect(doc.ServiceResponse.Account.FriendlyName).toBe('A & B <x>');
    expect(doc.ServiceResponse.Account.Status).toBe('active');
    expect(doc.ServiceResponse.Account.Uri).toBe(`${API}/Accounts/${a.sid}`);
    expect(doc.ServiceResponse.Account.SubresourceUris.SMSMessages).toBe(
      `${API}/Accounts/${a.sid}/SMS/Messages`,
    );
    expect(res.headers.get('link')).toContain('rel="related"');
  });

  it('creates in XML (201 + Location) and lists sub-accounts in both forms', async () => {
    const res = await ts.request('POST', `${API}/Accounts`, {
      form: { EmailAddress: email('xmlcreate'), Password: 'password-123' },
    });
    expect(res.status).toBe(201);
    const sid = xml.parse(res.text).ServiceResponse.Account.Sid;
    expect(res.headers.get('location')).toBe(`${ts.url}${API}/Accounts/${sid}`);
    const listJson = await ts.request('GET', `${API}/Accounts.json`);
    expect(Array.isArray(listJson.json)).toBe(true);
    expect(listJson.json.map((a: { sid: string }) => a.sid)).toContain(sid);
    expect(listJson.json.map((a: { sid: string }) => a.sid)).not.toContain(ts.admin.sid);
    const listXml = xml.parse((await ts.request('GET', `${API}/Accounts`)).text);
    const items = [listXml.ServiceResponse.Accounts.Account].flat();
    expect(items.map((a: { Sid: string }) => a.Sid)).toContain(sid);
  });

  it('updates with POST and PUT in both forms', async () => {
    const a = await createAccount(ts.admin, { EmailAddress: email('upd'), Password: 'password-123' });
    const r1 = await ts.request('POST', `${API}/Accounts/${a.sid}.json`, {
      form: { FriendlyName: 'Renamed' },
    });
    expect(r1.status).toBe(200);
    expect(r1.json.friendly_name).toBe('Renamed');
    const r2 = await ts.request('PUT', `${API}/Accounts/${a.sid}`, { form: { FriendlyName: 'Again' } });
    expect(r2.status).toBe(200);
    expect(xml.parse(r2.text).ServiceResponse.Account.FriendlyName).toBe('Again');
  });

  it('reads an account by URL-escaped email address', async () => {
    const a = await createAccount(ts.admin, { EmailAddress: email('byemail'), Password: 'password-123' });
    const res = await ts.request('GET', `${API}/Accounts/${encodeURIComponent(a.email)}.json`);
    expect(res.status).toBe(200);
    expect(res.json.sid).toBe(a.sid);
  });

  it('answers errors with one body shape in JSON and XML', async () => {
    const j = await ts.request('GET', `${API}/Accounts/AC00000000000000000000000000000000.json`);
    expect(j.status).toBe(404);
    expect(j.json).toEqual({
      code: 20404,
      message: expect.any(String),
      // The server's own error reference, absolute under PUBLIC_URL (the test server's URL).
      more_info: `${ts.url}/docs/errors#20404`,
      status: 404,
    });
    const x = await ts.request('GET', `${API}/Accounts/AC00000000000000000000000000000000`);
    expect(x.status).toBe(404);
    const ex = xml.parse(x.text).ServiceResponse.RestException;
    expect(ex).toMatchObject({ Code: 20404, Status: 404 });
    expect(typeof ex.Message).toBe('string');
  });

  it('404 for unknown paths, 405 with Allow for unsupported methods, DELETE account 405', async () => {
    const unknown = await ts.request('GET', `${API}/NoSuchThing.json`);
    expect(unknown.status).toBe(404);
    expect(unknown.json.code).toBe(20404);
    const a = await createAccount(ts.admin, { EmailAddress: email('del'), Password: 'password-123' });
    const del = await ts.request('DELETE', `${API}/Accounts/${a.sid}.json`);
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('GET, POST, PUT, HEAD');
    expect(del.json.code).toBe(20405);
    const putList = await ts.request('PUT', `${API}/Accounts.json`);
    expect(putList.status).toBe(405);
    expect(putList.headers.get('allow')).toContain('POST');
    // still there
    expect((await ts.request('GET', `${API}/Accounts/${a.sid}.json`)).status).toBe(200);
  });
});

describe('authentication', () => {
  it('accepts the account sid or the email address with the AuthToken or the password', async () => {
    const a = await createAccount(ts.admin, { EmailAddress: email('auth'), Password: 'password-123' });
    for (const creds of [
      a.creds,
      { user: a.email, secret: a.creds.secret },
      { user: encodeURIComponent(a.email), secret: a.creds.secret },
      { user: a.sid, secret: 'password-123' },
    ]) {
      const res = await ts.request('GET', `${API}/Accounts/${a.sid}.json`, { auth: creds });
      expect(res.status, JSON.stringify(creds.user)).toBe(200);
    }
  });

  it('rejects a wrong token or no credentials with 401 and a Basic challenge', async () => {
    const a = await createAccount(ts.admin, { EmailAddress: email('wrong'), Password: 'password-123' });
    const wrong = await ts.request('GET', `${API}/Accounts/${a.sid}.json`, {
      auth: { user: a.sid, secret: 'nope' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe('Basic realm="Switchboard"');
    const none = await ts.request('GET', `${API}/Accounts/${a.sid}.json`, { auth: null });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    const unknownUser = await ts.request('GET', `${API}/Accounts.json`, {
      auth: { user: 'nobody@example.test', secret: 'x' },
    });
    expect(unknownUser.status).toBe(401);
  });

  it('a new Password issues a new AuthToken and the old one stops working', async () => {
    const a = await createAccount(ts.admin, { EmailAddress: email('rotate'), Password: 'password-123' });
    const res = await ts.request('POST', `${API}/Accounts/${a.sid}.json`, {
      auth: a.creds,
      form: { Password: 'password-456' },
    });
    expect(res.status).toBe(200);
    expect(res.json.auth_token).not.toBe(a.creds.secret);
    expect((await ts.request('GET', `${API}/Accounts/${a.sid}.json`, { auth: a.creds })).status).toBe(401);
    const fresh = { user: a.sid, secret: res.json.auth_token };
    expect((await ts.request('GET', `${API}/Accounts/${a.sid}.json`, { auth: fresh })).status).toBe(200);
    expect(
      (
        await ts.request('GET', `${API}/Accounts/${a.sid}.json`, {
          auth: { user: a.sid, secret: 'password-456' },
        })
      ).status,
    ).toBe(200);
  });

  it('rejects the credentials of suspended and closed accounts', async () => {
    const s = await createAccount(ts.admin, { EmailAddress: email('susp'), Password: 'password-123' });
    const c = await createAccount(ts.admin, { EmailAddress: email('closed'), Password: 'password-123' });
    expect(
      (await ts.request('POST', `${API}/Accounts/${s.sid}.json`, { form: { Status: 'suspended' } })).status,
    ).toBe(200);
    expect(
      (await ts.request('POST', `${API}/Accounts/${c.sid}.json`, { form: { Status: 'closed' } })).status,
    ).toBe(200);
    for (const acct of [s, c]) {
      const res = await ts.request('GET', `${API}/Accounts/${acct.sid}.json`, { auth: acct.creds });
      expect(res.status).toBe(403);
      expect(res.json.code).toBe(20005);
    }
  });
});

describe('uninitialized Super Admin', () => {
  it('is rejected until it sets its own Password, which activates it', async () => {
    const other = await startTestServer({ label: 'uninit', env: { ADMIN_PASSWORD: '' } });
    try {
      const pw = other.server.bootstrap.generatedPassword;
      expect(pw).toMatch(/^[0-9a-f]{32}$/);
      const creds = { user: other.admin.sid, secret: pw as string };
      const get = await other.request('GET', `${API}/Accounts/${other.admin.sid}.json`, { auth: creds });
      expect(get.status).toBe(403);
      expect(get.json.message).toMatch(/uninitialized/);
      // Other modifications are still refused
      const rename = await other.request('POST', `${API}/Accounts/${other.admin.sid}.json`, {
        auth: creds,
        form: { FriendlyName: 'x' },
      });
      expect(rename.status).toBe(403);
      const set = await other.request('POST', `${API}/Accounts/${other.admin.sid}.json`, {
        auth: creds,
        form: { Password: 'my-own-password' },
      });
      expect(set.status).toBe(200);
      expect(set.json.status).toBe('active');
      const after = await other.request('GET', `${API}/Accounts/${other.admin.sid}.json`, {
        auth: { user: other.admin.sid, secret: 'my-own-password' },
      });
      expect(after.status).toBe(200);
      expect(after.json.status).toBe('active');
    } finally {
      await other.dispose();
    }
  });
});

describe('roles and isolation', () => {
  it('a Developer cannot create sub-accounts; an Administrator can', async () => {
    const dev = await createAccount(ts.admin, {
      EmailAddress: email('dev'),
      Password: 'password-123',
      Role: 'Developer',
    });
    const res = await ts.request('POST', `${API}/Accounts.json`, {
      auth: dev.creds,
      form: { EmailAddress: email('devchild'), Password: 'password-123' },
    });
    expect(res.status).toBe(403);
    const adm = await createAccount(ts.admin, {
      EmailAddress: email('adm'),
      Password: 'password-123',
      Role: 'Administrator',
    });
    const child = await createAccount(adm.creds, {
      EmailAddress: email('admchild'),
      Password: 'password-123',
    });
    const got = await ts.request('GET', `${API}/Accounts/${child.sid}.json`, { auth: adm.creds });
    expect(got.json.role).toBe('Administrator'); // inherited from the creator when Role is omitted
    expect(got.json.parent_sid).toBe(adm.sid);
  });

  it('never answers 2xx across tenants, for reads or writes, by sid or email', async () => {
    const a = await createAccount(ts.admin, {
      EmailAddress: email('tenant-a'),
      Password: 'password-123',
      Role: 'Administrator',
    });
    const a1 = await createAccount(a.creds, {
      EmailAddress: email('tenant-a1'),
      Password: 'password-123',
      Role: 'Administrator',
    });
    const b = await createAccount(ts.admin, {
      EmailAddress: email('tenant-b'),
      Password: 'password-123',
      Role: 'Administrator',
    });
    const attempts: Array<[Credentials, string]> = [
      [b.creds, a.sid],
      [b.creds, a1.sid],
      [b.creds, encodeURIComponent(a.email)],
      [a1.creds, a.sid], // child → parent
      [b.creds, ts.admin.sid],
    ];
    for (const [creds, target] of attempts) {
      for (const [method, form] of [
        ['GET', undefined],
        ['POST', { FriendlyName: 'pwned' }],
        ['PUT', { Status: 'suspended' }],
      ] as const) {
        const res = await ts.request(method, `${API}/Accounts/${target}.json`, { auth: creds, form });
        expect(res.status, `${method} ${target}`).toBe(404);
      }
    }
    const list = await ts.request('GET', `${API}/Accounts.json`, { auth: b.creds });
    expect(list.json).toEqual([]);
    // A parent administrator does reach its sub-account.
    expect((await ts.request('GET', `${API}/Accounts/${a1.sid}.json`, { auth: a.creds })).status).toBe(200);
    const aList = await ts.request('GET', `${API}/Accounts.json`, { auth: a.creds });
    expect(aList.json.map((x: { sid: string }) => x.sid)).toEqual([a1.sid]);
  });

  it('an account cannot change its own Status or Role', async () => {
    const a = await createAccount(ts.admin, { EmailAddress: email('self'), Password: 'password-123' });
    expect(
      (
        await ts.request('POST', `${API}/Accounts/${a.sid}.json`, {
          auth: a.creds,
          form: { Status: 'closed' },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await ts.request('POST', `${API}/Accounts/${a.sid}.json`, {
          auth: a.creds,
          form: { Role: 'Developer' },
        })
      ).status,
    ).toBe(403);
  });
});

describe('bad input', () => {
  it('refuses each bad parameter with 400 naming it, and creates nothing', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ EmailAddress: email('fn'), Password: 'password-123', FriendlyName: 'x'.repeat(65) }, /FriendlyName/],
      [{ EmailAddress: email('role'), Password: 'password-123', Role: 'Emperor' }, /Role/],
      [{ EmailAddress: email('st'), Password: 'password-123', Status: 'sleeping' }, /Status/],
      [{ Password: 'password-123' }, /EmailAddress/],
      [{ EmailAddress: 'not-an-email', Password: 'password-123' }, /EmailAddress/],
      [{ EmailAddress: email('pw') }, /Password/],
    ];
    const before = (await ts.request('GET', `${API}/Accounts.json`)).json.length;
    for (const [form, re] of cases) {
      const res = await ts.request('POST', `${API}/Accounts.json`, { form });
      expect(res.status, JSON.stringify(form)).toBe(400);
      expect(res.json.message).toMatch(re);
    }
    expect((await ts.request('GET', `${API}/Accounts.json`)).json.length).toBe(before);
    const ok = await createAccount(ts.admin, {
      EmailAddress: email('fn64'),
      Password: 'password-123',
      FriendlyName: 'x'.repeat(64),
    });
    const upd = await ts.request('POST', `${API}/Accounts/${ok.sid}.json`, { form: { Status: 'paused' } });
    expect(upd.status).toBe(400);
  });

  it('refuses a duplicate email address with 409', async () => {
    const e = email('dup');
    await createAccount(ts.admin, { EmailAddress: e, Password: 'password-123' });
    const res = await ts.request('POST', `${API}/Accounts.json`, {
      form: { EmailAddress: e.toUpperCase(), Password: 'password-123' },
    });
    expect(res.status).toBe(409);
  });

  it('400 for a malformed form body, 415 for another content type, 413 for an oversized body', async () => {
    const malformed = await ts.request('POST', `${API}/Accounts.json`, {
      form: 'EmailAddress=%E0%A4%A&Password=x',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.json.code).toBe(21102);
    const xmlBody = await ts.request('POST', `${API}/Accounts`, {
      body: '<x/>',
      headers: { 'content-type': 'text/plain' },
    });
    expect(xmlBody.status).toBe(415);
    expect(xml.parse(xmlBody.text).ServiceResponse.RestException.Status).toBe(415);
    const huge = await ts.request('POST', `${API}/Accounts.json`, {
      form: { EmailAddress: email('huge'), Password: 'password-123', FriendlyName: 'x'.repeat(200_000) },
    });
    expect(huge.status).toBe(413);
    expect(huge.json.code).toBe(20413);
  });
});

describe('restart', () => {
  it('keeps every account and status across a restart on the same Postgres and Redis', async () => {
    const local = await startTestServer({ label: 'restart' });
    const a = await httpRequest(local.url, 'POST', `${API}/Accounts.json`, {
      auth: local.admin,
      form: { EmailAddress: 'r1@example.test', Password: 'password-123', Role: 'Administrator' },
    });
    const b = await httpRequest(local.url, 'POST', `${API}/Accounts.json`, {
      auth: { user: a.json.sid, secret: a.json.auth_token },
      form: { EmailAddress: 'r2@example.test', Password: 'password-123' },
    });
    await httpRequest(local.url, 'POST', `${API}/Accounts/${a.json.sid}.json`, {
      auth: local.admin,
      form: { Status: 'suspended' },
    });
    await local.stop();

    const again = await startTestServer({ ns: local.ns });
    try {
      expect(again.admin.sid).toBe(local.admin.sid);
      const ra = await again.request('GET', `${API}/Accounts/${a.json.sid}.json`);
      const rb = await again.request('GET', `${API}/Accounts/${b.json.sid}.json`);
      expect(ra.json.status).toBe('suspended');
      expect(rb.json.status).toBe('suspended');
      expect(rb.json.auth_token).toBe(b.json.auth_token);
      // The cascade still knows who suspended whom after the restart.
      await again.request('POST', `${API}/Accounts/${a.json.sid}.json`, { form: { Status: 'active' } });
      const rb2 = await again.request('GET', `${API}/Accounts/${b.json.sid}.json`, {
        auth: { user: b.json.sid, secret: b.json.auth_token },
      });
      expect(rb2.status).toBe(200);
      expect(rb2.json.status).toBe('active');
    } finally {
      await again.dispose();
    }
  });
});
