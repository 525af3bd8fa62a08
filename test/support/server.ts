/**
 * Starts the real service in-process on an ephemeral port against a fresh namespace (Postgres
 * database + Redis prefix), plus a small HTTP client with Basic auth and form bodies.
 */
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { createNamespace, type TestNamespace } from './namespace.js';

export const ADMIN_EMAIL = 'admin@example.test';
export const ADMIN_PASSWORD = 'admin-password-1';

export interface Credentials {
  readonly user: string;
  readonly secret: string;
}

export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies are asserted field by field in tests
  readonly json: any;
}

export interface RequestOptions {
  auth?: Credentials | null;
  form?: Record<string, string | string[]> | string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface TestServer {
  readonly ns: TestNamespace;
  readonly server: RunningServer;
  readonly url: string;
  readonly admin: Credentials & { sid: string };
  request(method: string, path: string, opts?: RequestOptions): Promise<ApiResponse>;
  /** Stops the server, keeping the namespace (for restart tests). */
  stop(): Promise<void>;
  /** Stops the server and removes the namespace. */
  dispose(): Promise<void>;
}

export function basic(c: Credentials): string {
  return `Basic ${Buffer.from(`${c.user}:${c.secret}`).toString('base64')}`;
}

export function encodeForm(form: Record<string, string | string[]>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(form)) {
    for (const value of Array.isArray(v) ? v : [v])
      parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(value)}`);
  }
  return parts.join('&');
}

export async function httpRequest(base: string, method: string, path: string, opts: RequestOptions = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.auth) headers.authorization = basic(opts.auth);
  let body: string | Buffer | undefined = opts.body;
  if (opts.form !== undefined) {
    body = typeof opts.form === 'string' ? opts.form : encodeForm(opts.form);
    headers['content-type'] ??= 'application/x-www-form-urlencoded';
  }
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json } as ApiResponse;
}

export async function startTestServer(
  opts: { ns?: TestNamespace; env?: Record<string, string>; label?: string } = {},
): Promise<TestServer> {
  const ns = opts.ns ?? (await createNamespace(opts.label ?? 'api'));
  const config = loadConfig({
    HTTP_PORT: '0',
    HTTP_HOST: '127.0.0.1',
    DATABASE_URL: ns.databaseUrl,
    REDIS_URL: ns.redisUrl,
    REDIS_PREFIX: ns.redisPrefix,
    ...(ns.redisClusterNodes ? { REDIS_CLUSTER_NODES: ns.redisClusterNodes } : {}),
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Ephemeral SIP ports so test files can run in parallel.
    SIP_HOST: '127.0.0.1',
    SIP_PORT: '0',
    ...opts.env,
  });
  const server = await startServer(config, { logger: createLogger(config.logLevel) });
  const admin = (await server.accounts.get(server.bootstrap.adminSid))!;
  const self: TestServer = {
    ns,
    server,
    url: server.url,
    admin: { user: admin.sid, secret: admin.authToken, sid: admin.sid },
    request: (method, path, ro) => httpRequest(server.url, method, path, { auth: self.admin, ...ro }),
    stop: () => server.close(),
    async dispose() {
      await server.close();
      await ns.dispose();
    },
  };
  return self;
}

export const API = '/2012-04-24';
