/**
 * EngineLedger: the terminal events the main process owes when the engine cannot send them — one
 * per operation in flight and one per endpoint on a crash, for one endpoint when it is abandoned,
 * and for commands no engine will run — and the engine events it drops afterwards.
 */
import { describe, expect, it } from 'vitest';
import { EngineLedger } from '../../../src/media/engine-ledger.js';
import type { MediaEvent } from '../../../src/media/port.js';

function ledger() {
  const events: MediaEvent[] = [];
  return { ledger: new EngineLedger((e) => events.push(e)), events };
}

const ready = (endpointId: string): MediaEvent => ({
  type: 'media.endpointReady',
  endpoint: { endpointId, address: '127.0.0.1', port: 4000, sdp: '' },
});

describe('EngineLedger', () => {
  it('on loss, ends every operation in flight, then reports every endpoint lost', () => {
    const { ledger: l, events } = ledger();
    l.endpointCreating('EP-A');
    l.endpointCreating('EP-B');
    expect(l.accept(ready('EP-A'))).toBe(true);
    l.opStarted('op-play', { kind: 'play', endpointId: 'EP-A' });
    l.opStarted('op-collect', { kind: 'collect', endpointId: 'EP-A' });
    l.opStarted('op-rec', { kind: 'record', endpointId: 'EP-B', recordingSid: 'RE1' });
    expect(l.endpointCount).toBe(2);

    l.loseAll('engine crashed');

    expect(events).toEqual([
      {
        type: 'media.playFailed',
        endpointId: 'EP-A',
        opId: 'op-play',
        reason: 'engine-down',
        message: 'engine crashed',
      },
      { type: 'media.collectDone', endpointId: 'EP-A', opId: 'op-collect', digits: '', reason: 'lost' },
      {
        type: 'media.recordFailed',
        endpointId: 'EP-B',
        opId: 'op-rec',
        recordingSid: 'RE1',
        message: 'engine crashed',
      },
      { type: 'media.endpointLost', endpointId: 'EP-A', reason: 'engine crashed' },
      { type: 'media.endpointLost', endpointId: 'EP-B', reason: 'engine crashed' },
    ]);
    expect(l.endpointCount).toBe(0);
    events.length = 0;
    l.loseAll('again');
    expect(events).toEqual([]);
  });

  it('leaves alone operations the engine ended and a recording being stored', () => {
    const { ledger: l, events } = ledger();
    l.opStarted('op-1', { kind: 'play', endpointId: 'EP-A' });
    l.opStarted('op-2', { kind: 'record', endpointId: 'EP-A', recordingSid: 'RE2' });
    l.opStarted('op-3', { kind: 'collect', endpointId: 'EP-A' });
    l.accept({ type: 'media.playDone', endpointId: 'EP-A', opId: 'op-1', reason: 'completed' });
    l.opStoring('op-2');
    l.opEnded('op-3');
    l.loseAll('engine crashed');
    expect(events).toEqual([]);
  });

  it('abandons one endpoint: its operations end, a ready one is lost, then its engine events are dropped until released', () => {
    const { ledger: l, events } = ledger();
    l.endpointCreating('EP-A');
    l.accept(ready('EP-A'));
    l.opStarted('op-a', { kind: 'play', endpointId: 'EP-A' });
    l.opStarted('op-b', { kind: 'play', endpointId: 'EP-B' });

    expect(l.abandon('EP-A', 'not handled')).toBe(true);
    expect(events.map((e) => e.type)).toEqual(['media.playFailed', 'media.endpointLost']);
    expect(l.abandon('EP-A', 'not handled')).toBe(false);
    expect(events).toHaveLength(2);

    expect(l.accept({ type: 'media.dtmf', endpointId: 'EP-A', digit: '1' })).toBe(false);
    expect(l.accept({ type: 'media.released', endpointId: 'EP-A' })).toBe(false);
    // Released: the id is free again and its events flow.
    expect(l.accept({ type: 'media.dtmf', endpointId: 'EP-A', digit: '1' })).toBe(true);

    // The other endpoint's operation is still in flight.
    l.loseAll('engine crashed');
    expect(events.slice(2)).toEqual([
      {
        type: 'media.playFailed',
        endpointId: 'EP-B',
        opId: 'op-b',
        reason: 'engine-down',
        message: 'engine crashed',
      },
    ]);
  });

  it('abandons an endpoint being created as failed, and one it never knew without an event', () => {
    const { ledger: l, events } = ledger();
    l.endpointCreating('EP-A');
    expect(l.abandon('EP-A', 'not handled')).toBe(true);
    expect(events).toEqual([
      { type: 'media.endpointFailed', endpointId: 'EP-A', reason: 'engine-down', message: 'not handled' },
    ]);
    expect(l.abandon('EP-X', 'not handled')).toBe(false);
    expect(events).toHaveLength(1);
  });

  it('a failed create forgets the endpoint; a failed re-negotiation keeps it', () => {
    const { ledger: l } = ledger();
    l.endpointCreating('EP-A');
    l.accept({ type: 'media.endpointFailed', endpointId: 'EP-A', reason: 'bad-sdp', message: 'x' });
    expect(l.endpointCount).toBe(0);
    l.endpointCreating('EP-B');
    l.accept(ready('EP-B'));
    l.accept({ type: 'media.endpointFailed', endpointId: 'EP-B', reason: 'bad-sdp', message: 'x' });
    expect(l.endpointCount).toBe(1);
    l.accept({ type: 'media.released', endpointId: 'EP-B' });
    expect(l.endpointCount).toBe(0);
  });

  it('refuses each kind of command with its terminal event, once', () => {
    const { ledger: l, events } = ledger();
    l.endpointCreating('EP-A');
    l.opStarted('op-p', { kind: 'play', endpointId: 'EP-A' });
    l.refuse({ op: 'create', endpointId: 'EP-A' }, 'closed');
    l.refuse({ op: 'applySdp', endpointId: 'EP-A', sdp: '' }, 'closed');
    l.refuse(
      { op: 'play', endpointId: 'EP-A', opId: 'op-p', source: { kind: 'silence', ms: 20 }, opts: {} },
      'closed',
    );
    l.refuse(
      { op: 'collect', endpointId: 'EP-A', opId: 'op-c', opts: { timeoutSeconds: 5, finishOnKey: '#' } },
      'closed',
    );
    l.refuse(
      {
        op: 'record',
        endpointId: 'EP-A',
        opId: 'op-r',
        opts: {
          recordingSid: 'RE3',
          maxLengthSeconds: 10,
          silenceTimeoutSeconds: 5,
          finishOnKey: '#',
          playBeep: false,
        },
      },
      'closed',
    );
    l.refuse({ op: 'release', endpointId: 'EP-A' }, 'closed');
    l.refuse({ op: 'stop', endpointId: 'EP-A' }, 'closed');
    expect(events).toEqual([
      { type: 'media.endpointFailed', endpointId: 'EP-A', reason: 'engine-down', message: 'closed' },
      { type: 'media.endpointFailed', endpointId: 'EP-A', reason: 'engine-down', message: 'closed' },
      {
        type: 'media.playFailed',
        endpointId: 'EP-A',
        opId: 'op-p',
        reason: 'engine-down',
        message: 'closed',
      },
      { type: 'media.collectDone', endpointId: 'EP-A', opId: 'op-c', digits: '', reason: 'lost' },
      {
        type: 'media.recordFailed',
        endpointId: 'EP-A',
        opId: 'op-r',
        recordingSid: 'RE3',
        message: 'closed',
      },
      { type: 'media.released', endpointId: 'EP-A' },
    ]);
    expect(l.endpointCount).toBe(0);
    // The refused play is no longer in flight: a later loss does not end it a second time.
    events.length = 0;
    l.loseAll('engine crashed');
    expect(events).toEqual([]);
  });
});
