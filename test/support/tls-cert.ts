/**
 * A self-signed certificate for 127.0.0.1 and localhost, made at runtime with openssl (Debian
 * package openssl) in a private directory, for the WSS listener of a test server. A missing openssl
 * fails with the install command, never hangs.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawned } from '../../ops/lib/tools.js';

export interface TestCertificate {
  readonly cert: string;
  readonly key: string;
  /** TLS_CERT and TLS_KEY for the server's environment. */
  readonly env: { readonly TLS_CERT: string; readonly TLS_KEY: string };
  dispose(): Promise<void>;
}

export async function selfSignedCertificate(): Promise<TestCertificate> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const child = spawn(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  try {
    await spawned(child, 'openssl');
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    if (code !== 0) throw new Error(`openssl req failed (${code}): ${stderr.trim()}`);
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    cert,
    key,
    env: { TLS_CERT: cert, TLS_KEY: key },
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}
