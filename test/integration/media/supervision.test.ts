/**
 * The engine process is supervised: when it dies, every running operation gets its terminal
 * event, every endpoint is reported `media.endpointLost`, a new engine starts, and new endpoints
 * work. close() releases what is left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RtpPeer, startEngine, type TestEngine, until } from './helpers.js';

describe('engine supervision', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startEngine();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reports endpoints lost when the engine dies, restarts it, and works again', async () => {
    const peer = await RtpPeer.open('127.0.0.2');
    try {
      await t.endpoint('sv-1', peer.sdp());
      await t.endpoint('sv-2');
      t.engine.play('sv-1', 'op-loop', { kind: 'tone', frequencyHz: 440, ms: 200 }, { loop: 0 });
      t.engine.collect('sv-1', 'op-c', { timeoutSeconds: 60, finishOnKey: '#' });
      t.engine.record('sv-2', 'op-r', {
        recordingSid: 'RE00000000000000000000000000000000',
        maxLengthSeconds: 60,
        silenceTimeoutSeconds: 0,
        finishOnKey: '',
        playBeep: false,
      });
      await until(() => peer.received.length > 5, 3000, 'audio');
      const pid = t.engine.pid!;
      process.kill(pid, 'SIGKILL');
      // Issued while the engine is dying: still exactly one terminal event.
      t.engine.play('sv-2', 'op-dying', { kind: 'tone', frequencyHz: 440, ms: 100 });

      const lost1 = await t.log.waitFor('media.endpointLost', (e) => e.endpointId === 'sv-1');
      await t.log.waitFor('media.endpointLost', (e) => e.endpointId === 'sv-2');
      expect(lost1.reason).toContain('crash');
      expect((await t.log.waitFor('media.playFailed', (e) => e.opId === 'op-loop')).reason).toBe(
        'engine-down',
      );
      expect((await t.log.waitFor('media.collectDone', (e) => e.opId === 'op-c')).reason).toBe('lost');
      await t.log.waitFor('media.recordFailed', (e) => e.opId === 'op-r');
      // Exactly one terminal event per operation.
      expect(
        t.log.count('media.playFailed', (e) => e.type === 'media.playFailed' && e.opId === 'op-loop'),
      ).toBe(1);

      await t.engine.whenReady();
      expect(t.engine.pid).not.toBe(pid);
      expect(t.engine.restartCount).toBe(1);
      const ep = await t.endpoint('sv-3', peer.sdp());
      expect(ep.port).toBeGreaterThan(0);
      t.engine.play('sv-3', 'op-after', { kind: 'tone', frequencyHz: 440, ms: 100 });
      expect((await t.log.waitFor('media.playDone', (e) => e.opId === 'op-after')).reason).toBe('completed');
      expect((await t.engine.load()).restarts).toBe(1);
      expect(
        t.log.count('media.playFailed', (e) => e.type === 'media.playFailed' && e.opId === 'op-dying'),
      ).toBe(1);
      expect(t.log.count('media.playDone', (e) => e.type === 'media.playDone' && e.opId === 'op-dying')).toBe(
        0,
      );
    } finally {
      peer.close();
    }
  });

  it('a release right behind the create leaves nothing behind, whichever wins, and the id can be reused', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `race-${i}`);
    for (const id of ids) {
      t.engine.createEndpoint(id);
      t.engine.release(id);
    }
    for (const id of ids) {
      await t.log.waitFor('media.released', (e) => e.endpointId === id);
      expect(await t.engine.stats(id)).toBeNull();
    }
    t.log.events.length = 0; // only events from here on
    const ep = await t.endpoint('race-0');
    expect(ep.endpointId).toBe('race-0');
    t.engine.createEndpoint('race-0');
    expect((await t.log.waitFor('media.endpointFailed', (e) => e.endpointId === 'race-0')).reason).toBe(
      'exists',
    );
    t.engine.release('race-0');
  });

  it('close() releases every endpoint with its events and refuses later commands', async () => {
    const local = await startEngine();
    await local.endpoint('cl-1');
    local.engine.collect('cl-1', 'op-cl', { timeoutSeconds: 60, finishOnKey: '#' });
    await local.close();
    expect(local.log.events.filter((e) => e.type === 'media.collectDone')).toMatchObject([
      { reason: 'released' },
    ]);
    expect(local.log.count('media.released')).toBe(1);
    local.engine.play('cl-1', 'op-late', { kind: 'tone', frequencyHz: 440, ms: 100 });
    expect(local.log.events.at(-1)).toMatchObject({ type: 'media.playFailed', reason: 'engine-down' });
  });
});
