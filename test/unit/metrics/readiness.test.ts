/**
 * Readiness: ready only when every required check is up; optional checks are reported but never
 * decide; a check that throws, rejects or hangs is reported down (bounded, so `/ready` answers).
 */
import { describe, expect, it } from 'vitest';
import { Readiness } from '../../../src/metrics/readiness.js';

describe('Readiness', () => {
  it('is ready when every required check is up, whatever optional ones say', async () => {
    const r = new Readiness();
    r.add('postgres', async () => ({ up: true }));
    r.add('smpp', () => ({ up: false, parts: { 'sys@smsc:2775': 'connecting' } }), { required: false });
    expect(await r.report()).toEqual({
      status: 'ready',
      checks: {
        postgres: { status: 'up', required: true },
        smpp: { status: 'down', required: false, parts: { 'sys@smsc:2775': 'connecting' } },
      },
    });
  });

  it('is not ready when a required check is down, throws, rejects or hangs', async () => {
    const r = new Readiness();
    r.add('redis', () => ({ up: false }));
    r.add('throws', () => {
      throw new Error('boom');
    });
    r.add('rejects', () => Promise.reject(new Error('boom')));
    r.add('hangs', () => new Promise(() => {}));
    r.add('postgres', () => ({ up: true }));
    const started = Date.now();
    const report = await r.report();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(report.status).toBe('not_ready');
    expect(report.checks).toEqual({
      redis: { status: 'down', required: true },
      throws: { status: 'down', required: true },
      rejects: { status: 'down', required: true },
      hangs: { status: 'down', required: true },
      postgres: { status: 'up', required: true },
    });
  });
});
