/**
 * Engine → main messages are handled one at a time, guarded: a message whose handling throws ends
 * that message (log line, the endpoint it concerns gets its terminal event) and never stops the
 * process; later messages, other endpoints and new endpoints keep working.
 *
 * The bad messages are injected on the real engine child's IPC `message` event, the very listener
 * the engine's own messages reach (an engine cannot be made to send a malformed message on purpose).
 * Unguarded, a throw there is an uncaught exception: the whole process exits.
 */
import type { ChildProcess } from 'node:child_process';
import { afterEach, expect, it } from 'vitest';
import { startEngine, type TestEngine } from './helpers.js';

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const childOf = (x: TestEngine): ChildProcess => (x.engine as unknown as { child: ChildProcess }).child;

it('a malformed engine message ends only its endpoint; later messages and other endpoints go on', async () => {
  t = await startEngine();
  const engine = t;
  await engine.endpoint('EP-A');
  await engine.endpoint('EP-B');
  const child = childOf(engine);

  // Not an engine message at all, and an event the handler cannot read: logged, nothing else.
  expect(() => child.emit('message', null)).not.toThrow();
  expect(() =>
    child.emit('message', { kind: 'event', event: { type: 'media.endpointReady' } }),
  ).not.toThrow();
  // An event about EP-A whose handling throws: EP-A ends (media.endpointLost), once.
  expect(() =>
    child.emit('message', { kind: 'event', event: { type: 'media.endpointReady', endpointId: 'EP-A' } }),
  ).not.toThrow();
  const lost = await engine.log.waitFor('media.endpointLost', (e) => e.endpointId === 'EP-A');
  expect(lost.reason).toMatch(/not handled/);

  // Later messages are handled: a stats round trip for EP-B, a new endpoint, a release of EP-B.
  expect(await engine.engine.stats('EP-B')).not.toBeNull();
  await engine.endpoint('EP-C');
  engine.engine.release('EP-B');
  await engine.log.waitFor('media.released', (e) => e.endpointId === 'EP-B');
  // EP-A was released in the engine; that produces no second ending for it.
  await new Promise((r) => setTimeout(r, 200));
  expect(engine.log.count('media.endpointLost', (e) => 'endpointId' in e && e.endpointId === 'EP-A')).toBe(1);
  expect(engine.log.count('media.released', (e) => 'endpointId' in e && e.endpointId === 'EP-A')).toBe(0);
  expect(engine.engine.pid).toBe(child.pid);
  expect(engine.engine.restartCount).toBe(0);
});
