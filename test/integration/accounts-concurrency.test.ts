/**
 * Account status changes against a row that moved meanwhile (another node, or a concurrent
 * request): the change was decided from what was read, so it is refused (409) and nothing of the
 * tree is written; the retry reads the record again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { AccountStatus } from '../../src/store/account-store.js';
import { PgAccountStore } from '../../src/store/postgres/account-repository.js';
import { API, type Credentials, startTestServer, type TestServer } from '../support/server.js';

let ts: TestServer;
let store: PgAccountStore;
let seq = 0;

async function createAccount(as: Credentials, tag: string, role = 'Developer'): Promise<{ sid: string }> {
  const res = await ts.request('POST', `${API}/Accounts.json`, {
    auth: as,
    form: { EmailAddress: `${tag}-${++seq}@example.test`, Password: 'password-123', Role: role },
  });
  expect(res.status, res.text).toBe(201);
  return { sid: res.json.sid };
}

async function tree(): Promise<{ parent: string; child: string }> {
  const res = await ts.request('POST', `${API}/Accounts.json`, {
    form: { EmailAddress: `p-${++seq}@example.test`, Password: 'password-123', Role: 'Administrator' },
  });
  expect(res.status, res.text).toBe(201);
  const creds = { user: res.json.sid, secret: res.json.auth_token };
  const child = await createAccount(creds, 'c');
  return { parent: res.json.sid, child: child.sid };
}

const statusOf = async (sid: string) => (await store.findBySid(sid))?.status;

beforeAll(async () => {
  ts = await startTestServer({ label: 'acctrace' });
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
