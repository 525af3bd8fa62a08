/** Profiles (JSON only) and the multi-provider extension: every status of the spec's Errors table, resolution. */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PROFILE_SID } from '../../src/store/profile-defaults.js';
import { API, type Credentials, startTestServer, type TestServer } from '../support/server.js';
import { startSipp } from '../support/sipp.js';
import { markup, until } from '../support/until.js';
import { startWebhookServer } from '../support/webhook-server.js';

let ts: TestServer;
let admin: { sid: string; creds: Credentials };
let dev: { sid: string; creds: Credentials };
let schemaBase: string;

const platformCt = () => `application/instance+json;schema=${schemaBase}/rc-profile-schema.json`;
const subscriberCt = () => `application/instance+json;schema=${schemaBase}/rc-subscriber-schema.json`;

async function account(as: Credentials, email: string, role: string) {
  const r = await ts.request('POST', `${API}/Accounts.json`, {
    auth: as,
    form: { EmailAddress: email, Password: 'password-123', Role: role },
  });
  return { sid: r.json.sid as string, creds: { user: r.json.sid, secret: r.json.auth_token } };
}

const post = (body: unknown, ct: string, auth?: Credentials) =>
  ts.request('POST', `${API}/Profiles`, {
    auth: auth ?? ts.admin,
    body: JSON.stringify(body),
    headers: { 'content-type': ct },
  });
const link = (sid: string, op: 'LINK' | 'UNLINK', links: string[], auth?: Credentials) => {
  const headers: Record<string, string> = { 'x-http-method-override': op };
  if (links.length) headers.link = links.join(', ');
  return ts.request('PUT', `${API}/Profiles/${sid}`, { auth: auth ?? ts.admin, headers });
};
const accountUrl = (sid: string) => `<${ts.url}${API}/Accounts/${sid}>;rel=related`;
const sidOf = (r: { headers: Headers }) => (r.headers.get('location') as string).split('/').pop() as string;
const effectiveLink = async (sid: string) =>
  (await ts.request('GET', `${API}/Accounts/${sid}.json`)).headers.get('link') as string;
/** A subscriber profile document with one trunk whose password is `secret`. */
const trunkDoc = (secret: string, match?: string) => ({
  multiprovider: {
    'outbound-voice': [
      {
        proxy: [
          { uri: 'sip:trunk.example.com', username: 'trunk', password: secret, ...(match ? { match } : {}) },
        ],
      },
    ],
  },
});

beforeAll(async () => {
  ts = await startTestServer({ label: 'profiles' });
  schemaBase = `${ts.url}${API}/Profiles/schemas`;
  admin = await account(ts.admin, 'padmin@example.test', 'Administrator');
  dev = await account(admin.creds, 'pdev@example.test', 'Developer');
});
afterAll(async () => {
  await ts?.dispose();
});

describe('Profiles', () => {
  it('creates a platform profile (201 + Location), gets it with Link describedBy and Last-Modified, lists it', async () => {
    const doc = { featureEnablement: { outboundPSTN: { allowedPrefixes: ['+1'], blockedPrefixes: [] } } };
    const r = await post(doc, platformCt());
    expect(r.status).toBe(201);
    expect(r.json).toEqual(doc);
    const location = r.headers.get('location') as string;
    expect(location).toMatch(/\/2012-04-24\/Profiles\/PR[0-9a-f]{32}$/);
    const sid = location.split('/').pop() as string;
    const got = await ts.request('GET', `${API}/Profiles/${sid}`);
    expect(got.json).toEqual(doc);
    expect(got.headers.get('link')).toBe(`<${schemaBase}/rc-profile-schema.json>; rel="describedBy"`);
    expect(got.headers.get('last-modified')).toMatch(/GMT$/);
    const list = await ts.request('GET', `${API}/Profiles`);
    const item = list.json.find((p: { sid: string }) => p.sid === sid);
    expect(item).toMatchObject({ uri: `${API}/Profiles/${sid}`, sid });
    expect(typeof item.dateCreated).toBe('number');
    const schema = await ts.request('GET', `${API}/Profiles/schemas/rc-profile-schema.json`);
    expect(schema.json.additionalProperties).toBe(false);
  });

  it('400 for a schema-violating document, invalid JSON or a missing schema parameter; 413 above 10 MB', async () => {
    const bad = await post({ somethingElse: true }, platformCt());
    expect(bad.status).toBe(400);
    expect(bad.json.message).toMatch(/rc-profile-schema/);
    const badSub = await post({ multiprovider: { 'outbound-sms': [{}] } }, subscriberCt(), admin.creds);
    expect(badSub.status).toBe(400);
    const notJson = await ts.request('POST', `${API}/Profiles`, {
      body: '{oops',
      headers: { 'content-type': platformCt() },
    });
    expect(notJson.status).toBe(400);
    expect((await post({}, 'application/json')).status).toBe(400);
    const big = `{"featureEnablement":{"x":"${'a'.repeat(10 * 1024 * 1024 - 29)}"}}`;
    expect(Buffer.byteLength(big)).toBe(10 * 1024 * 1024 + 1);
    const tooBig = await ts.request('POST', `${API}/Profiles`, {
      body: big,
      headers: { 'content-type': platformCt() },
    });
    expect(tooBig.status).toBe(413);
    expect(tooBig.json.code).toBe(20413);
  });

  it('403: non-Super-Admin platform writes, reading an unlinked profile, the default profile', async () => {
    expect((await post({}, platformCt(), admin.creds)).status).toBe(403);
    const p = await post({}, platformCt());
    const sid = (p.headers.get('location') as string).split('/').pop() as string;
    expect((await ts.request('GET', `${API}/Profiles/${sid}`, { auth: dev.creds })).status).toBe(403);
    const put = await ts.request('PUT', `${API}/Profiles/${sid}`, {
      auth: admin.creds,
      body: '{}',
      headers: { 'content-type': platformCt() },
    });
    expect(put.status).toBe(403);
    expect((await ts.request('DELETE', `${API}/Profiles/${sid}`, { auth: admin.creds })).status).toBe(403);
    expect((await link(sid, 'LINK', [accountUrl(admin.sid)], admin.creds)).status).toBe(403);
    expect((await link(sid, 'UNLINK', [accountUrl(admin.sid)], admin.creds)).status).toBe(403);
    const putDefault = await ts.request('PUT', `${API}/Profiles/${DEFAULT_PROFILE_SID}`, {
      body: '{}',
      headers: { 'content-type': platformCt() },
    });
    expect(putDefault.status).toBe(403);
    expect((await ts.request('DELETE', `${API}/Profiles/${DEFAULT_PROFILE_SID}`)).status).toBe(403);
    // Once linked to its account, every role may read the platform profile.
    expect((await link(sid, 'LINK', [accountUrl(dev.sid)])).status).toBe(200);
    expect((await ts.request('GET', `${API}/Profiles/${sid}`, { auth: dev.creds })).status).toBe(200);
  });

  it('404 for a missing profile (GET, PUT, DELETE, LINK, UNLINK) and a missing link target', async () => {
    const missing = 'PR0123456789abcdef0123456789abcdef';
    expect((await ts.request('GET', `${API}/Profiles/${missing}`)).status).toBe(404);
    expect(
      (
        await ts.request('PUT', `${API}/Profiles/${missing}`, {
          body: '{}',
          headers: { 'content-type': platformCt() },
        })
      ).status,
    ).toBe(404);
    expect((await ts.request('DELETE', `${API}/Profiles/${missing}`)).status).toBe(404);
    expect((await link(missing, 'LINK', [accountUrl(admin.sid)])).status).toBe(404);
    expect((await link(missing, 'UNLINK', [accountUrl(admin.sid)])).status).toBe(404);
    const p = await post({}, platformCt());
    const sid = (p.headers.get('location') as string).split('/').pop() as string;
    expect((await link(sid, 'LINK', [accountUrl('AC0123456789abcdef0123456789abcdef')])).status).toBe(404);
    expect(
      (
        await link(sid, 'LINK', [
          `<${ts.url}${API}/Organizations/OR0123456789abcdef0123456789abcdef>;rel=related`,
        ])
      ).status,
    ).toBe(404);
  });

  it('400 for no Link header, several, or a rel other than related', async () => {
    const p = await post({}, platformCt());
    const sid = (p.headers.get('location') as string).split('/').pop() as string;
    expect((await link(sid, 'LINK', [])).status).toBe(400);
    expect((await link(sid, 'LINK', [accountUrl(admin.sid), accountUrl(dev.sid)])).status).toBe(400);
    expect((await link(sid, 'UNLINK', [`<${ts.url}${API}/Accounts/${admin.sid}>;rel=next`])).status).toBe(
      400,
    );
  });

  it('PUT updates, DELETE removes the profile and all its associations', async () => {
    const p = await post({ featureEnablement: {} }, platformCt());
    const sid = (p.headers.get('location') as string).split('/').pop() as string;
    const upd = await ts.request('PUT', `${API}/Profiles/${sid}`, {
      body: JSON.stringify({ featureEnablement: { inboundSMS: {} } }),
      headers: { 'content-type': platformCt() },
    });
    expect(upd.status).toBe(200);
    expect(upd.json).toEqual({ featureEnablement: { inboundSMS: {} } });
    await link(sid, 'LINK', [accountUrl(admin.sid)]);
    expect((await ts.request('GET', `${API}/Accounts/${admin.sid}.json`)).headers.get('link')).toContain(sid);
    expect((await ts.request('DELETE', `${API}/Profiles/${sid}`)).status).toBe(200);
    expect((await ts.request('GET', `${API}/Profiles/${sid}`)).status).toBe(404);
    expect((await ts.request('GET', `${API}/Accounts/${admin.sid}.json`)).headers.get('link')).toContain(
      DEFAULT_PROFILE_SID,
    );
  });

  it('resolves account → parent → organization → default', async () => {
    const parent = await account(ts.admin, 'res-parent@example.test', 'Administrator');
    const child = await account(parent.creds, 'res-child@example.test', 'Developer');
    const linkHeader = async () =>
      (await ts.request('GET', `${API}/Accounts/${child.sid}.json`)).headers.get('link') as string;
    expect(await linkHeader()).toContain(DEFAULT_PROFILE_SID);
    const orgSid = (await ts.request('GET', `${API}/Accounts/${child.sid}.json`)).json.organization_sid;
    const mk = async () =>
      ((await post({}, platformCt())).headers.get('location') as string).split('/').pop() as string;
    const [pOrg, pParent, pChild] = [await mk(), await mk(), await mk()];
    await link(pOrg, 'LINK', [`<${ts.url}${API}/Organizations/${orgSid}>;rel=related`]);
    expect(await linkHeader()).toContain(pOrg);
    await link(pParent, 'LINK', [accountUrl(parent.sid)]);
    expect(await linkHeader()).toContain(pParent);
    await link(pChild, 'LINK', [accountUrl(child.sid)]);
    expect(await linkHeader()).toContain(pChild);
    expect((await link(pChild, 'UNLINK', [accountUrl(child.sid)])).status).toBe(200);
    expect(await linkHeader()).toContain(pParent);
    // Unlink the org profile so other tests keep the default.
    await link(pOrg, 'UNLINK', [`<${ts.url}${API}/Organizations/${orgSid}>;rel=related`]);
  });

  it('a subscriber profile is created by an administrator, linked to its account, and feeds the multi-provider config', async () => {
    const doc = { multiprovider: { 'outbound-sms': [{ destination_network_id: '1550' }] } };
    const r = await post(doc, subscriberCt(), admin.creds);
    expect(r.status).toBe(201);
    expect((await post(doc, subscriberCt(), dev.creds)).status).toBe(403);
    expect(await ts.server.profiles.effectiveMultiProvider(admin.sid)).toEqual(doc.multiprovider);
    const sid = (r.headers.get('location') as string).split('/').pop() as string;
    expect((await ts.request('GET', `${API}/Profiles/${sid}`, { auth: admin.creds })).status).toBe(200);
  });
});

describe('Multi-provider extension configuration', () => {
  const cfg = {
    'outbound-voice': [
      {
        proxy: [
          {
            uri: 'sip:127.0.0.2:5060;transport=udp',
            username: 'u',
            password: 'p-secret',
            match: '^\\+1',
            headers: [{ headerName: 'X-Tenant', key: 'id', value: '42' }],
          },
        ],
      },
    ],
    'outbound-sms': [{ destination_network_id: 7 }],
  };

  it('Super Admin adds, gets and modifies; it wins over the subscriber profile; passwords masked', async () => {
    const target = await account(ts.admin, 'ext@example.test', 'Administrator');
    const add = await ts.request('POST', `${API}/ExtensionsConfiguration.json`, {
      form: {
        ExtensionName: 'multi_provider',
        Enabled: 'true',
        ConfigurationData: JSON.stringify(cfg),
        AccountSid: target.sid,
      },
    });
    expect(add.status).toBe(201);
    expect(add.json.sid).toMatch(/^EX[0-9a-f]{32}$/);
    expect(add.text).not.toContain('p-secret');
    expect(await ts.server.profiles.effectiveMultiProvider(target.sid)).toEqual(cfg);
    const got = await ts.request('GET', `${API}/ExtensionsConfiguration.json/${add.json.sid}`);
    expect(got.json).toMatchObject({
      extension_name: 'multi_provider',
      enabled: true,
      account_sid: target.sid,
    });
    const mod = await ts.request('POST', `${API}/ExtensionsConfiguration.json/${add.json.sid}`, {
      form: { Enabled: 'false' },
    });
    expect(mod.json.enabled).toBe(false);
    expect(await ts.server.profiles.effectiveMultiProvider(target.sid)).toBeNull();
    const again = await ts.request('POST', `${API}/ExtensionsConfiguration.json`, {
      form: { ExtensionName: 'multi_provider', ConfigurationData: '{}', AccountSid: target.sid },
    });
    expect(again.status).toBe(409);
  });

  it('refuses non-Super-Admins and bad input with the problem named', async () => {
    const form = { ExtensionName: 'multi_provider', ConfigurationData: '{}', AccountSid: admin.sid };
    expect(
      (await ts.request('POST', `${API}/ExtensionsConfiguration.json`, { auth: admin.creds, form })).status,
    ).toBe(403);
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ ...form, ConfigurationData: '{not json' }, /not valid JSON/],
      [{ ...form, ConfigurationData: '{"outbound-sms":[{}]}' }, /destination_network_id.*required/],
      [
        { ...form, ConfigurationData: '{"outbound-voice":[{"proxy":[{"uri":"sip:x","match":"("}]}]}' },
        /match.*regular expression/,
      ],
      [
        {
          ...form,
          ConfigurationData:
            '{"outbound-voice":[{"proxy":[{"uri":"sip:x","headers":[{"key":"a","value":"b"}]}]}]}',
        },
        /headerName.*required/,
      ],
      [{ ...form, ConfigurationData: '{"outbound-fax":[]}' }, /not a known member/],
      [{ ...form, ExtensionName: 'other' }, /ExtensionName/],
    ];
    for (const [f, re] of cases) {
      const r = await ts.request('POST', `${API}/ExtensionsConfiguration.json`, { form: f });
      expect(r.status, JSON.stringify(f)).toBe(400);
      expect(r.json.message).toMatch(re);
    }
    expect(
      (
        await ts.request('POST', `${API}/ExtensionsConfiguration.json`, {
          form: { ...form, AccountSid: 'AC0123456789abcdef0123456789abcdef' },
        })
      ).status,
    ).toBe(404);
  });
});

describe('Profile ownership: the creator account tree or the Super Admin', () => {
  it("A cannot LINK B's subscriber profile to itself, nor GET, PUT, UNLINK or DELETE it", async () => {
    const a = await account(ts.admin, 'tenant-a@example.test', 'Administrator');
    const b = await account(ts.admin, 'tenant-b@example.test', 'Administrator');
    const mine = sidOf(await post(trunkDoc('a-trunk-secret'), subscriberCt(), a.creds));
    const theirs = sidOf(await post(trunkDoc('b-trunk-secret'), subscriberCt(), b.creds));

    const linked = await link(theirs, 'LINK', [accountUrl(a.sid)], a.creds);
    expect(linked.status).toBe(403);
    expect(linked.json.code).toBe(20403);
    expect(await effectiveLink(a.sid)).toContain(mine);
    expect(await ts.server.profiles.effectiveMultiProvider(a.sid)).toEqual(
      trunkDoc('a-trunk-secret').multiprovider,
    );

    const read = await ts.request('GET', `${API}/Profiles/${theirs}`, { auth: a.creds });
    expect(read.status).toBe(403);
    expect(read.text).not.toContain('b-trunk-secret');
    const put = await ts.request('PUT', `${API}/Profiles/${theirs}`, {
      auth: a.creds,
      body: JSON.stringify(trunkDoc('hijacked')),
      headers: { 'content-type': subscriberCt() },
    });
    expect(put.status).toBe(403);
    expect((await link(theirs, 'UNLINK', [accountUrl(b.sid)], a.creds)).status).toBe(403);
    expect((await ts.request('DELETE', `${API}/Profiles/${theirs}`, { auth: a.creds })).status).toBe(403);
    const list = await ts.request('GET', `${API}/Profiles`, { auth: a.creds });
    expect(list.json.map((p: { sid: string }) => p.sid)).not.toContain(theirs);

    // B's profile is untouched and still B's.
    const own = await ts.request('GET', `${API}/Profiles/${theirs}`, { auth: b.creds });
    expect(own.json).toEqual(trunkDoc('b-trunk-secret'));
    expect(await effectiveLink(b.sid)).toContain(theirs);
  });

  it('the creator, its ancestors and the Super Admin may; a sub-account of the creator may not', async () => {
    const parent = await account(ts.admin, 'own-parent@example.test', 'Administrator');
    const child = await account(parent.creds, 'own-child@example.test', 'Administrator');
    const childs = sidOf(await post(trunkDoc('child-secret'), subscriberCt(), child.creds));
    const parents = sidOf(await post(trunkDoc('parent-secret'), subscriberCt(), parent.creds));

    expect((await ts.request('GET', `${API}/Profiles/${childs}`, { auth: parent.creds })).status).toBe(200);
    expect((await link(childs, 'UNLINK', [accountUrl(child.sid)], parent.creds)).status).toBe(200);
    expect((await link(childs, 'LINK', [accountUrl(child.sid)], parent.creds)).status).toBe(200);
    expect(await effectiveLink(child.sid)).toContain(childs);

    // The parent's profile is not the child's to use elsewhere or read, even though it is in scope.
    expect((await link(parents, 'LINK', [accountUrl(child.sid)], child.creds)).status).toBe(403);
    const read = await ts.request('GET', `${API}/Profiles/${parents}`, { auth: child.creds });
    expect(read.status).toBe(403);
    expect(read.text).not.toContain('parent-secret');

    expect((await ts.request('GET', `${API}/Profiles/${childs}`)).status).toBe(200);
    expect((await link(childs, 'UNLINK', [accountUrl(child.sid)])).status).toBe(200);
  });
});

describe('Tenant patterns (multi-provider match) run in linear time and are checked on write', () => {
  it("'(' in a subscriber profile is a 400 naming the member, on POST and PUT, and is never stored", async () => {
    const a = await account(ts.admin, 'pattern-a@example.test', 'Administrator');
    const bad = await post(trunkDoc('s', '('), subscriberCt(), a.creds);
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe(21100);
    expect(bad.json.message).toContain('/multiprovider/outbound-voice/0/proxy/0/match');
    expect(bad.json.message).toMatch(/not a valid regular expression/);
    expect(await effectiveLink(a.sid)).toContain(DEFAULT_PROFILE_SID);

    const sid = sidOf(await post(trunkDoc('s', '^sip:\\+1'), subscriberCt(), a.creds));
    for (const pattern of ['(', 'a(?<=b)', '(a)\\1']) {
      const put = await ts.request('PUT', `${API}/Profiles/${sid}`, {
        auth: a.creds,
        body: JSON.stringify(trunkDoc('s', pattern)),
        headers: { 'content-type': subscriberCt() },
      });
      expect(put.status, pattern).toBe(400);
      expect(put.json.message).toContain('/multiprovider/outbound-voice/0/proxy/0/match');
    }
    // NUL and lone surrogates cannot be stored (Postgres jsonb): a 400 as well, not a 500.
    for (const pattern of ['a\u0000', 'a\ud800']) {
      const put = await ts.request('PUT', `${API}/Profiles/${sid}`, {
        auth: a.creds,
        body: JSON.stringify(trunkDoc('s', pattern)),
        headers: { 'content-type': subscriberCt() },
      });
      expect(put.status, JSON.stringify(pattern)).toBe(400);
      expect(put.json.message).toContain('/multiprovider/outbound-voice/0/proxy/0/match');
    }
    const stored = await ts.request('GET', `${API}/Profiles/${sid}`, { auth: a.creds });
    expect(stored.json).toEqual(trunkDoc('s', '^sip:\\+1'));
  });

  it('a lookbehind in ConfigurationData is a 400 naming the member, on add and modify', async () => {
    const target = await account(ts.admin, 'pattern-ext@example.test', 'Administrator');
    const data = (match: string) =>
      JSON.stringify({ 'outbound-voice': [{ proxy: [{ uri: 'sip:gw.example.com', match }] }] });
    const form = { ExtensionName: 'multi_provider', AccountSid: target.sid };
    const add = await ts.request('POST', `${API}/ExtensionsConfiguration.json`, {
      form: { ...form, ConfigurationData: data('(?<=x)y') },
    });
    expect(add.status).toBe(400);
    expect(add.json.message).toContain('ConfigurationData.outbound-voice[0].proxy[0].match');
    expect(add.json.message).toMatch(/lookaround or a backreference/);
    const ok = await ts.request('POST', `${API}/ExtensionsConfiguration.json`, {
      form: { ...form, ConfigurationData: data('(a+)+X') },
    });
    expect(ok.status).toBe(201);
    const mod = await ts.request('POST', `${API}/ExtensionsConfiguration.json/${ok.json.sid}`, {
      form: { ConfigurationData: data('(') },
    });
    expect(mod.status).toBe(400);
    expect(mod.json.message).toContain('ConfigurationData.outbound-voice[0].proxy[0].match');
    for (const match of ['a\u0000', 'a\ud800']) {
      const r = await ts.request('POST', `${API}/ExtensionsConfiguration.json/${ok.json.sid}`, {
        form: { ConfigurationData: data(match) },
      });
      expect(r.status, JSON.stringify(match)).toBe(400);
      expect(r.json.message).toContain('ConfigurationData.outbound-voice[0].proxy[0].match');
    }
    const got = await ts.request('GET', `${API}/ExtensionsConfiguration.json/${ok.json.sid}`);
    expect(got.json.configuration_data['outbound-voice'][0].proxy[0].match).toBe('(a+)+X');
  });

  it('a call to 30 a under a profile matching (a+)+X is routed over its trunk without stalling the node', async () => {
    const hooks = await startWebhookServer();
    hooks.script('/answer', markup('<Pause length="1"/>'));
    const trunk = await startSipp({ scenario: 'uas-answer-then-bye.xml', localIp: '127.0.0.3' });
    try {
      const caller = await account(ts.admin, 'pattern-call@example.test', 'Administrator');
      const doc = {
        multiprovider: {
          'outbound-voice': [{ proxy: [{ uri: `sip:127.0.0.3:${trunk.localPort}`, match: '(a+)+X' }] }],
        },
      };
      expect((await post(doc, subscriberCt(), caller.creds)).status).toBe(201);
      // The histogram's own 10 ms timer must keep firing while the call is planned; a backtracking
      // engine holds the thread for minutes on this To, which shows as its maximum delay.
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      // Nothing listens at 127.0.0.9: the call completes only when it leaves through the trunk,
      // the first proxy, used as the outbound proxy because the pattern does not match.
      const created = await ts.request('POST', `${API}/Accounts/${caller.sid}/Calls.json`, {
        auth: caller.creds,
        form: {
          From: '+15550001000',
          To: `sip:${'a'.repeat(30)}@127.0.0.9:5060`,
          Url: `${hooks.origin}/answer`,
        },
      });
      expect(created.status, created.text).toBe(201);
      const call = await until(
        async () =>
          (
            await ts.request('GET', `${API}/Accounts/${caller.sid}/Calls/${created.json.sid}.json`, {
              auth: caller.creds,
            })
          ).json,
        (c) => c.status === 'completed' || c.status === 'failed',
        20_000,
      );
      delay.disable();
      expect(call.status).toBe('completed');
      expect(delay.max).toBeLessThan(1e9);
      expect((await trunk.done).code).toBe(0);
    } finally {
      trunk.kill();
      await hooks.close();
    }
  }, 60_000);
});
