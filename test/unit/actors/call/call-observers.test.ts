/**
 * The observers of a call's domain events, fed by a real call machine with fake effects: the bus
 * keeps each call's events in order, callbacks are numbered as sent, failures are notified once,
 * the CDR follows the call and metrics count it.
 */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { createCallMachine } from '../../../../src/actors/call/call.machine.js';
import type { CallEmitted, CallInput } from '../../../../src/actors/call/call.types.js';
import type { CallEffects } from '../../../../src/actors/call/call-effects.js';
import { PlacementError } from '../../../../src/actors/call/call-effects.js';
import { callMetrics } from '../../../../src/actors/call/call-metrics.js';
import {
  CallEventBus,
  cdrWriter,
  failureNotifier,
  type SendCallback,
  statusCallbacks,
} from '../../../../src/actors/call/call-observers.js';
import { createLogger } from '../../../../src/logger.js';
import { createMetrics } from '../../../../src/metrics/prometheus.js';
import type { NotifyInput } from '../../../../src/notifications/notifier.js';
import type { PlaceCall } from '../../../../src/sip/port.js';

const logger = createLogger('silent');
const PLACED: PlaceCall = {
  requestUri: 'sip:b@h',
  from: { uri: 'sip:a@h' },
  to: { uri: 'sip:b@h' },
  sdp: 'v=0',
};
const flush = () => new Promise((r) => setImmediate(r));

/** Effects whose waits succeed at once (or the placement fails with `placeError`). */
function effects(placeError?: PlacementError): CallEffects {
  const none = () => {};
  return {
    ring: none,
    answer: none,
    reject: none,
    cancel: none,
    hangUp: none,
    invite: none,
    endDialog: none,
    applyRemoteSdp: none,
    setMuted: none,
    unbridge: none,
    releaseMedia: none,
    startApp: none,
    redirectApp: () => false,
    endApp: none,
    releaseAdmission: none,
    notifyNoMedia: none,
    admit: async () => {},
    place: async () => {
      if (placeError) throw placeError;
      return PLACED;
    },
    createEndpoint: async () => 'v=0',
    sendDigits: async () => {},
    answerRefer: none,
    notifyRefer: none,
    transfer: none,
    refer: none,
    planRefer: async () => {
      throw new Error('no REFER here');
    },
  };
}

const input: CallInput = {
  sid: 'CA1',
  accountSid: 'AC1',
  direction: 'outbound-api',
  from: '+15550001111',
  to: '+15550002222',
  apiVersion: '2012-04-24',
  createdAt: Date.now(),
  markup: { url: 'http://h/a', method: 'POST', fallbackUrl: null, fallbackMethod: 'POST' },
  progress: { url: 'http://h/s', method: 'POST', events: ['initiated', 'answered', 'completed'] },
};

function harness(placeError?: PlacementError) {
  const bus = new CallEventBus(logger);
  const sent: Array<{ url: string; params: Record<string, string> }> = [];
  const updates: Array<Record<string, unknown>> = [];
  const notes: NotifyInput[] = [];
  const metrics = createMetrics();
  bus.subscribe(
    cdrWriter(
      {
        patch: async (_sid, patch) => {
          updates.push(patch);
        },
      },
      logger,
    ),
  );
  bus.subscribe(callMetrics(metrics.calls));
  bus.subscribe(failureNotifier((n) => notes.push(n)));
  const send: SendCallback = async (_call, url, _method, params) => {
    // A slow first callback must not let a later event overtake it.
    if (sent.length === 0) await new Promise((r) => setTimeout(r, 20));
    sent.push({ url, params });
  };
  bus.subscribe(statusCallbacks(send, 'node-1'));
  const actor = createActor(createCallMachine(effects(placeError)), { input });
  actor.on('*', (e) => bus.publish(e as CallEmitted));
  return { bus, actor, sent, updates, notes, metrics };
}

describe('call observers', () => {
  it('progress callbacks in order, numbered as sent; the modification StatusCallback follows completed', async () => {
    const h = harness();
    h.actor.start();
    await flush();
    h.actor.send({ type: 'sip.ringing', at: Date.now() }); // not asked for: no callback, no number
    h.actor.send({ type: 'sip.answered', at: Date.now() });
    h.actor.send({ type: 'http.endCallback', callback: { url: 'http://h/end', method: 'POST' } });
    h.actor.send({ type: 'sip.bye', at: Date.now() });
    await h.bus.drain();
    expect(h.sent.map((s) => `${s.url} ${s.params.CallStatus} ${s.params.SequenceNumber}`)).toEqual([
      'http://h/s initiated 0',
      'http://h/s in-progress 1',
      'http://h/s completed 2',
      'http://h/end completed 3',
    ]);
    expect(h.updates.map((u) => u.status)).toEqual(['ringing', 'in-progress', 'completed']);
    expect(h.notes).toEqual([]);
  });

  it('a leg refused locally gets one Notification (13225 for a refused target) and its record keeps the 403', async () => {
    const h = harness(new PlacementError(403, 'destination refused'));
    h.actor.start();
    await flush();
    await h.bus.drain();
    expect(h.notes).toHaveLength(1);
    expect(h.notes[0]).toMatchObject({ errorCode: 13225, callSid: 'CA1' });
    expect(h.updates.at(-1)).toMatchObject({ status: 'failed', sipResponseCode: 403 });
  });

  it('metrics count legs by direction and final status', async () => {
    const h = harness();
    h.actor.start();
    await flush();
    h.actor.send({ type: 'sip.answered', at: Date.now() });
    h.actor.send({ type: 'sip.bye', at: Date.now() });
    await h.bus.drain();
    const text = await h.metrics.registry.metrics();
    expect(text).toMatch(/switchboard_calls_started_total\{direction="outbound-api"\} 1/);
    expect(text).toMatch(/switchboard_calls_ended_total\{direction="outbound-api",status="completed"\} 1/);
    expect(text).toMatch(/switchboard_calls_active\{direction="outbound-api"\} 0/);
  });
});
