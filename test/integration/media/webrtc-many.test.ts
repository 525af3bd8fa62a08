/**
 * Many WebRTC legs set up at once: every DTLS handshake completes and every leg carries SRTP from
 * the engine. Event-driven: each step waits for its own event, bounded only against a hang.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngine, type TestEngine, until } from './helpers.js';
import { BrowserPeer } from './webrtc-peer.js';

const LEGS = 30;

describe('WebRTC endpoints set up at once', () => {
  let t: TestEngine;
  const peers: BrowserPeer[] = [];
  beforeAll(async () => {
    t = await startEngine();
  });
  afterAll(async () => {
    await Promise.all(peers.map((p) => p.close()));
    await t?.close();
  });

  it(`connects all ${LEGS} legs and plays to each`, { timeout: 120_000 }, async () => {
    const ids = Array.from({ length: LEGS }, (_, i) => `many-${i}`);
    for (let i = 0; i < LEGS; i++) peers.push(new BrowserPeer());
    const offers = await Promise.all(peers.map((p) => p.offer()));
    const answers = await Promise.all(ids.map((id, i) => t.endpoint(id, offers[i])));
    await Promise.all(peers.map((p, i) => p.acceptAnswer(answers[i]!.sdp)));
    const outcomes = await Promise.allSettled(peers.map((p) => p.connected(90_000)));
    const failed = outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []));
    expect(failed).toEqual([]);

    for (const id of ids) t.engine.play(id, `${id}:p`, { kind: 'tone', frequencyHz: 700, ms: 2000 });
    await until(
      () => peers.every((p) => p.received.filter((r) => r.pt === 111).length >= 10),
      60_000,
      'Opus from the engine on every leg',
    );
    for (const id of ids) t.engine.release(id);
    await Promise.all(ids.map((id) => t.log.waitFor('media.released', (e) => e.endpointId === id)));
  });
});
