/**
 * Changes of sub-account trees over real HTTP against real Postgres and Redis: the status cascade
 * (spec §Account Status), migration between organizations, and status changes decided from a row
 * that moved meanwhile (another node, a concurrent request): those are refused (409) and nothing of
 * the tree is written; the retry reads the record again.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppError } from '../../src/errors.js';
import { AccountStatus } from '../../src/store/account-store.js';
import { PgAccountStore } from '../../src/store/postgres/account-repository.js';
import { API, type Credentials, startTestServer, type TestServer } from '../support/server.js';

let ts: TestServer;
let store: PgAccountStore;
let seq = 0;

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

const email = (tag: string) => `${tag}-${++seq}@example.test`;

async function tree(): Promise<{ parent: string; child: string }> {
  const p = await createAccount(ts.admin, {
    EmailAddress: email('p'),
    Password: 'password-123',
    Role: 'Administrator',
  });
  const c = await createAccount(p.creds, { EmailAddress: email('c'), Password: 'password-123' });
  return { parent: p.sid, child: c.sid };
}

const statusOf = async (sid: string) => (await store.findBySid(sid))?.status;

beforeAll(async () => {
  ts = await startTestServer({ label: 'accttree' });
  store = new PgAccountStore(ts.server.db);
});
afterAll(async () => {
  await ts?.dispose();
});

describe('account status changes decided from a stale row', () => {
  it('are refused with 409 and write nothing of the tree; the retry reads the record again', async () => {
    const { parent, child } = await tree();
    // This node has the parent cached as active...
    expect((await ts.request('GET', `${API}/Accounts/${parent}.json`)).json.status).toBe('active');
    // ...when another node suspends it on its own (no change notice reaches this node's cache).
    await store.updateMany([{ sid: parent, patch: { status: 'suspended', suspendedBy: parent } }]);

    const stale = await ts.request('POST', `${API}/Accounts/${parent}.json`, {
      form: { Status: 'suspended' },
    });
    expect(stale.status).toBe(409);
    expect(stale.json.code).toBe(20409);
    expect(await statusOf(parent)).toBe(AccountStatus.Suspended);
    expect(await statusOf(child)).toBe(AccountStatus.Active);

    // The refusal evicted the stale row: the same request now sees `suspended` and closing works.
    const closed = await ts.request('POST', `${API}/Accounts/${parent}.json`, { form: { Status: 'closed' } });
    expect(closed.status, closed.text).toBe(200);
    expect(closed.json.status).toBe('closed');
    expect(await statusOf(child)).toBe(AccountStatus.Closed);
  });

  it('the store writes a batch only when every expected row is still as expected', async () => {
    const { parent, child } = await tree();
    const err = await store
      .updateMany([
        {
          sid: parent,
          patch: { status: 'suspended', suspendedBy: parent },
          expect: { status: 'active', suspendedBy: null },
        },
        {
          sid: child,
          patch: { status: 'suspended', suspendedBy: parent },
          expect: { status: 'suspended', suspendedBy: parent },
        },
      ])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(409);
    // The parent's row matched, but the batch rolled back with the child's.
    expect(await statusOf(parent)).toBe(AccountStatus.Active);
    expect(await statusOf(child)).toBe(AccountStatus.Active);
  });
});

describe('status cascade', () => {
  it('suspending a parent rejects its grandchild; reactivating restores it; closed is final', async () => {
    const p = await createAccount(ts.admin, {
      EmailAddress: email('p'),
      Password: 'password-123',
      Role: 'Administrator',
    });
    const c = await createAccount(p.creds, {
      EmailAddress: email('c'),
      Password: 'password-123',
      Role: 'Administrator',
    });
    const g = await createAccount(c.creds, { EmailAddress: email('g'), Password: 'password-123' });
    const selfSuspended = await createAccount(c.creds, {
      EmailAddress: email('s'),
      Password: 'password-123',
    });
    expect(
      (
        await ts.request('POST', `${API}/Accounts/${selfSuspended.sid}.json`, {
          auth: c.creds,
          form: { Status: 'suspended' },
        })
      ).status,
    ).toBe(200);

    const susp = await ts.request('POST', `${API}/Accounts/${p.sid}.json`, { form: { Status: 'suspended' } });
    expect(susp.status).toBe(200);
    expect(susp.json.status).toBe('suspended');
    expect((await ts.request('GET', `${API}/Accounts/${g.sid}.json`, { auth: g.creds })).status).toBe(403);
    expect((await ts.request('GET', `${API}/Accounts/${g.sid}.json`)).json.status).toBe('suspended');
    // A child cannot be reactivated while its parent is suspended.
    expect(
      (await ts.request('POST', `${API}/Accounts/${c.sid}.json`, { form: { Status: 'active' } })).status,
    ).toBe(409);

    const back = await ts.request('POST', `${API}/Accounts/${p.sid}.json`, { form: { Status: 'active' } });
    expect(back.json.status).toBe('active');
    expect((await ts.request('GET', `${API}/Accounts/${g.sid}.json`, { auth: g.creds })).status).toBe(200);
    // What was suspended on its own stays suspended.
    expect((await ts.request('GET', `${API}/Accounts/${selfSuspended.sid}.json`)).json.status).toBe(
      'suspended',
    );

    const closed = await ts.request('PUT', `${API}/Accounts/${p.sid}.json`, { form: { Status: 'closed' } });
    expect(closed.json.status).toBe('closed');
    for (const x of [c, g, selfSuspended]) {
      expect((await ts.request('GET', `${API}/Accounts/${x.sid}.json`)).json.status).toBe('closed');
    }
    const reopen = await ts.request('POST', `${API}/Accounts/${p.sid}.json`, { form: { Status: 'active' } });
    expect(reopen.status).toBe(409);
    const rename = await ts.request('POST', `${API}/Accounts/${p.sid}.json`, {
      form: { FriendlyName: 'zombie' },
    });
    expect(rename.status).toBe(409);
    expect(rename.json.code).toBe(20006);
  });

  it('closing a tree after a suspension cycle closes every descendant without XState warnings', async () => {
    const warn = vi.spyOn(console, 'warn');
    try {
      const p = await createAccount(ts.admin, {
        EmailAddress: email('wp'),
        Password: 'password-123',
        Role: 'Administrator',
      });
      const c = await createAccount(p.creds, { EmailAddress: email('wc'), Password: 'password-123' });
      // A suspension and a reactivation first, so the child's row has moved twice before it is closed.
      for (const Status of ['suspended', 'active'])
        expect((await ts.request('POST', `${API}/Accounts/${p.sid}.json`, { form: { Status } })).status).toBe(
          200,
        );
      const closed = await ts.request('POST', `${API}/Accounts/${p.sid}.json`, {
        form: { Status: 'closed' },
      });
      expect(closed.json.status).toBe('closed');
      expect((await ts.request('GET', `${API}/Accounts/${c.sid}.json`)).json.status).toBe('closed');
      const stopped = warn.mock.calls.filter((args) => String(args[0]).includes('stopped actor'));
      expect(stopped).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });

  it('keeps the status and its origin in the Postgres record, and mirrors nothing into Redis', async () => {
    const a = await createAccount(ts.admin, { EmailAddress: email('snap'), Password: 'password-123' });
    await ts.request('POST', `${API}/Accounts/${a.sid}.json`, { form: { Status: 'suspended' } });
    // Read past the service's cache: the row itself carries the status and who suspended it.
    const row = await new PgAccountStore(ts.server.db).findBySid(a.sid);
    expect(row?.status).toBe('suspended');
    expect(row?.suspendedBy).toBe(a.sid);
    const mirrored = await ts.server.redis.keys(`${ts.ns.redisPrefix}:account:${a.sid}:snap`);
    expect(mirrored).toEqual([]);
  });
});

describe('migration', () => {
  it('answers the five status codes of the spec', async () => {
    const orgRes = await ts.request('POST', `${API}/Organizations.json`, {
      form: { DomainName: 'other.example.test' },
    });
    expect(orgRes.status).toBe(201);
    const org = orgRes.json.sid;
    const top = await createAccount(ts.admin, {
      EmailAddress: email('top'),
      Password: 'password-123',
      Role: 'Administrator',
    });
    const sub = await createAccount(top.creds, { EmailAddress: email('sub'), Password: 'password-123' });

    const notAdmin = await ts.request('POST', `${API}/Accounts/migrate/${sub.sid}.json`, {
      auth: top.creds,
      form: { Organization: org },
    });
    expect(notAdmin.status).toBe(403);
    expect((await ts.request('POST', `${API}/Accounts/migrate/${top.sid}.json`, { form: {} })).status).toBe(
      412,
    );
    expect(
      (
        await ts.request('POST', `${API}/Accounts/migrate/AC0123456789abcdef0123456789abcdef.json`, {
          form: { Organization: org },
        })
      ).status,
    ).toBe(404);
    expect(
      (await ts.request('POST', `${API}/Accounts/migrate/${sub.sid}.json`, { form: { Organization: org } }))
        .status,
    ).toBe(400);
    const ok = await ts.request('POST', `${API}/Accounts/migrate/${top.sid}.json`, {
      form: { Organization: 'other.example.test' },
    });
    expect(ok.status).toBe(200);
    expect(ok.json.organization_sid).toBe(org);
    expect((await ts.request('GET', `${API}/Accounts/${sub.sid}.json`)).json.organization_sid).toBe(org);
    expect(
      (await ts.request('POST', `${API}/Accounts/migrate/${top.sid}.json`, { form: { Organization: org } }))
        .status,
    ).toBe(400);
  });

  it('only the Super Admin places a new account in another organization', async () => {
    const orgRes = await ts.request('POST', `${API}/Organizations.json`, {
      form: { DomainName: 'third.example.test' },
    });
    const adm = await createAccount(ts.admin, {
      EmailAddress: email('orgadm'),
      Password: 'password-123',
      Role: 'Administrator',
    });
    const denied = await ts.request('POST', `${API}/Accounts.json`, {
      auth: adm.creds,
      form: { EmailAddress: email('x'), Password: 'password-123', OrganizationSid: orgRes.json.sid },
    });
    expect(denied.status).toBe(403);
    const allowed = await createAccount(ts.admin, {
      EmailAddress: email('y'),
      Password: 'password-123',
      OrganizationSid: orgRes.json.sid,
    });
    expect((await ts.request('GET', `${API}/Accounts/${allowed.sid}.json`)).json.organization_sid).toBe(
      orgRes.json.sid,
    );
  });
});
