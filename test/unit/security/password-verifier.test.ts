import { describe, expect, it } from 'vitest';
import { hashPassword } from '../../../src/security/credentials.js';
import { PasswordVerifier, VerifierSaturatedError } from '../../../src/security/password-verifier.js';

describe('PasswordVerifier', () => {
  it('verifies against the stored hash; a null hash (unknown user) is always false', async () => {
    const v = new PasswordVerifier({ concurrency: 2, queue: 4 });
    const hash = await hashPassword('right-password');
    expect(await v.verify('right-password', hash)).toBe(true);
    expect(await v.verify('wrong-password', hash)).toBe(false);
    expect(await v.verify('right-password', null)).toBe(false);
  });

  it('runs at most `concurrency` at once, queues up to `queue`, refuses the rest', async () => {
    const v = new PasswordVerifier({ concurrency: 2, queue: 3 });
    const hash = await hashPassword('pw-123456');
    let peak = 0;
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => {
        const p = v.verify('nope', hash);
        peak = Math.max(peak, v.load.running);
        return p;
      }),
    );
    expect(peak).toBeLessThanOrEqual(2);
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused).toHaveLength(3);
    for (const r of refused)
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(VerifierSaturatedError);
    expect(v.load).toEqual({ running: 0, waiting: 0 });
  });
});
