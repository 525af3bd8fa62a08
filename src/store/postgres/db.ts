/**
 * Postgres connection and forward-only migrations. The database named by DATABASE_URL is created
 * when missing (if the role may); migrations are applied in order under an advisory lock so several
 * nodes starting at once apply each migration exactly once.
 */
import { readdir, readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg, { type ConnectionPool, type SQLQuery, sql } from '@databases/pg';
import { redactUrl } from '../../config.js';
import type { StoreMeter } from '../../metrics/port.js';
import { invalidTextReason, StoreInputError } from '../store-errors.js';

export type Db = ConnectionPool;
export { sql };
export type { SQLQuery };

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
const MIGRATION_LOCK = 0x5b0a4d; // arbitrary, constant advisory-lock key

/** Raised when Postgres cannot be reached; main prints it as one line and exits non-zero. */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
  constructor(url: string, cause: unknown) {
    super(
      `cannot reach Postgres at ${redactUrl(url)} (${(cause as Error)?.message ?? cause}); ` +
        `start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`,
      { cause },
    );
  }
}

// @databases/pg is CommonJS: under NodeNext its default export is the module object.
const createConnectionPool = pg.default;

/**
 * A URL without a user name connects as PGUSER or the operating-system user, as libpq does
 * (node-postgres would otherwise send no user name at all).
 */
export function withDefaultUser(url: string): string {
  const u = new URL(url);
  if (!u.username) u.username = process.env.PGUSER ?? userInfo().username;
  return u.toString();
}

/**
 * Whether a query failed for want of a server rather than because of the statement: no SQLSTATE
 * (network, pool timeout; our own parameter refusal excepted), class 08 (connection exception), 57P (operator intervention: shutdown) or 53
 * (insufficient resources).
 */
function isConnectionError(err: Error): boolean {
  if (err instanceof StoreInputError) return false;
  const code = (err as { code?: unknown }).code;
  return typeof code !== 'string' || /^(08|57P|53)/.test(code) || !/^[0-9A-Z]{5}$/.test(code);
}

export function openDb(url: string, poolSize = 10, meter?: StoreMeter): Db {
  return createConnectionPool({
    connectionString: withDefaultUser(url),
    bigIntMode: 'number',
    poolSize,
    // Fail fast instead of waiting for ever when the server is down.
    connectionTimeoutMilliseconds: 5000,
    queueTimeoutMilliseconds: 10000,
    // An idle pooled connection failed (the server went away); queries report their own errors.
    onError: () => meter?.connectionError('postgres'),
    onQueryError: (_query, _formatted, err) => {
      if (meter && isConnectionError(err)) meter.connectionError('postgres');
    },
    // Every statement of every repository passes here before it is sent: text Postgres cannot
    // store is refused with a typed error instead of a driver error deep in a request or packet.
    onQueryStart: (_query, { text, values }) => assertStorableParameters(text, values),
  });
}

/** Nested JSON parameters are walked this deep at most (the HTTP layer caps nesting far lower). */
const MAX_PARAM_DEPTH = 64;

/**
 * Throws StoreInputError when a statement parameter (a string, or a string inside an array or a
 * JSON object) holds NUL or an unpaired surrogate. `text` is the formatted statement (`$1`, `$2`…),
 * used only to name the column in the error.
 */
export function assertStorableParameters(text: string, values: readonly unknown[]): void {
  values.forEach((v, i) => {
    const reason = firstInvalid(v, 0);
    if (reason) throw new StoreInputError(columnOfParameter(text, i + 1), reason);
  });
}

function firstInvalid(v: unknown, depth: number): ReturnType<typeof invalidTextReason> {
  if (typeof v === 'string') return invalidTextReason(v);
  if (v === null || typeof v !== 'object' || depth > MAX_PARAM_DEPTH) return null;
  if (v instanceof Date || Buffer.isBuffer(v)) return null;
  if (Array.isArray(v)) {
    for (const x of v) {
      const r = firstInvalid(x, depth + 1);
      if (r) return r;
    }
    return null;
  }
  for (const [k, x] of Object.entries(v)) {
    const r = invalidTextReason(k) ?? firstInvalid(x, depth + 1);
    if (r) return r;
  }
  return null;
}

/**
 * The column parameter `$n` is compared with or inserted into, best effort: `col = $n`,
 * `col ILIKE $n`, the n-th member of an `INSERT INTO t (cols) VALUES (…)` tuple, or the column an
 * `unnest($a, $b, …) AS r(cols)` array becomes; otherwise `parameter $n`.
 */
export function columnOfParameter(text: string, n: number): string {
  const ref = new RegExp(`([a-z_][a-z0-9_]*)"?\\s*(?:=|<>|I?LIKE)\\s*\\$${n}(?![0-9])`, 'i').exec(text);
  if (ref?.[1]) return ref[1];
  const insert = /INSERT\s+INTO\s+[^(]+\(([^)]*)\)\s*VALUES\s*/i.exec(text);
  if (insert?.[1]) {
    const columns = insert[1].split(',').map((c) => c.trim().replace(/"/g, ''));
    for (const tuple of text.slice(insert.index + insert[0].length).matchAll(/\(([^()]*)\)/g)) {
      const at = (tuple[1] ?? '').split(',').findIndex((p) => new RegExp(`\\$${n}(?![0-9])`).test(p));
      if (at >= 0) return columns[at] ?? `parameter $${n}`;
    }
  }
  for (const u of text.matchAll(/unnest\s*\(([^()]*)\)\s+AS\s+[a-z_][a-z0-9_]*\s*\(([^()]*)\)/gi)) {
    const at = (u[1] ?? '').split(',').findIndex((p) => new RegExp(`\\$${n}(?![0-9])`).test(p));
    const column = at >= 0 ? (u[2] ?? '').split(',')[at]?.trim() : undefined;
    if (column) return column;
  }
  return `parameter $${n}`;
}

/** Creates the database named in `url` if it does not exist. */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!name) return;
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const db = openDb(admin.toString(), 1);
  try {
    const rows = await db.query(sql`SELECT 1 FROM pg_database WHERE datname = ${name}`);
    if (rows.length === 0) {
      try {
        await db.query(sql`CREATE DATABASE ${sql.ident(name)}`);
      } catch (e) {
        // Another node may have created it between the check and the create.
        if ((e as { code?: string }).code !== '42P04') throw e;
      }
    }
  } catch (e) {
    // SQLSTATE codes are 5 characters; anything else (ECONNREFUSED, ENOTFOUND, timeouts) means the
    // server could not be reached.
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) throw new DatabaseUnavailableError(url, e);
    throw e;
  } finally {
    await db.dispose();
  }
}

export async function dropDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const db = openDb(admin.toString(), 1);
  try {
    await db.query(sql`DROP DATABASE IF EXISTS ${sql.ident(name)} WITH (FORCE)`);
  } finally {
    await db.dispose();
  }
}

/** Postgres `deadlock_detected`. */
const DEADLOCK = '40P01';

/**
 * Runs a statement again when Postgres chose it as a deadlock's victim (it rolled back only that
 * statement), up to three tries. Writers lock rows in sid order so that this stays rare.
 */
export async function retryingDeadlocks<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if ((err as { code?: unknown }).code !== DEADLOCK || attempt >= 3) throw err;
    }
  }
}

export async function migrate(db: Db): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_.*\.sql$/.test(f)).sort();
  const applied: string[] = [];
  await db.tx(async (tx) => {
    await tx.query(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await tx.query(
      sql`CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set(
      (await tx.query(sql`SELECT name FROM schema_migrations`)).map((r) => r.name as string),
    );
    for (const file of files) {
      if (done.has(file)) continue;
      const text = await readFile(join(MIGRATIONS_DIR, file), 'utf8');
      await tx.query(sql.__dangerous__rawValue(text));
      await tx.query(sql`INSERT INTO schema_migrations (name) VALUES (${file})`);
      applied.push(file);
    }
  });
  return applied;
}
