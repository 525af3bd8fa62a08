/**
 * A program that is not installed makes its starter reject at once with the install command, never
 * a wait for a peer that will not come (sipp and baresip in test/support, `spawned` for everyone).
 */
import { spawn } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawned, ToolStartError } from '../../../../ops/lib/tools.js';
import { Baresip } from '../../../support/baresip.js';
import { startSipp } from '../../../support/sipp.js';

describe('starting a tool that is missing', () => {
  let path: string | undefined;
  beforeEach(() => {
    path = process.env.PATH;
    // spawn() resolves programs on the PATH of the moment: an empty one makes every tool missing.
    process.env.PATH = '/nonexistent';
  });
  afterEach(() => {
    process.env.PATH = path;
  });

  it('spawned() rejects with a ToolStartError naming the Debian package', async () => {
    const child = spawn('sox', ['--version'], { stdio: 'ignore' });
    const err = await spawned(child, 'sox').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolStartError);
    expect((err as Error).message).toBe(
      'sox is not installed (Debian package sox, libsox-fmt-all): apt-get install -y --no-install-recommends sox libsox-fmt-all',
    );
  });

  it('startSipp rejects promptly', async () => {
    const started = Date.now();
    await expect(startSipp({ scenario: 'sn:uas' })).rejects.toThrow(/sipp is not installed.*sip-tester/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('Baresip.start rejects promptly', async () => {
    const started = Date.now();
    const phone = new Baresip({ aor: 'sip:alice@127.0.0.1:5080', password: 'x' });
    await expect(phone.start()).rejects.toThrow(/baresip is not installed.*apt-get install/);
    expect(Date.now() - started).toBeLessThan(5000);
    await phone.stop();
  });
});
