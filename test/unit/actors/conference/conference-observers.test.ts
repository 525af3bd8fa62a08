import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  ConferenceEventBus,
  recordWriter,
  statusCallbacks,
} from '../../../../src/actors/conference/conference-observers.js';
import {
  ConferenceRooms,
  type EnterRequest,
} from '../../../../src/actors/interpreter/verbs/conference-rooms.js';
import type { ConferenceRecord, ConferenceUpdate } from '../../../../src/store/conference-store.js';

const logger = pino({ level: 'silent' });
const noMedia = { leave: () => {}, setMuted: () => {}, play: () => {}, stopPlay: () => {} };
const enter = (callSid: string, o: Partial<EnterRequest> = {}): EnterRequest => ({
  accountSid: 'AC1',
  friendlyName: 'room',
  apiVersion: '2012-04-24',
  callSid,
  endpointId: callSid,
  muted: false,
  startConferenceOnEnter: true,
  endConferenceOnExit: false,
  maxParticipants: 10,
  media: noMedia,
  ...o,
});

describe('conference observers', () => {
  it('write the record in order and send the callbacks asked for, numbered', async () => {
    const writes: Array<['insert', ConferenceRecord] | ['update', string, ConferenceUpdate]> = [];
    const sent: Array<Record<string, string>> = [];
    const bus = new ConferenceEventBus(logger);
    bus.subscribe(
      recordWriter(
        {
          insert: async (c) => {
            // A slow insert still lands before the updates.
            await new Promise((r) => setTimeout(r, 5));
            writes.push(['insert', c]);
          },
          update: async (sid, patch) => {
            writes.push(['update', sid, patch]);
          },
        },
        logger,
      ),
    );
    bus.subscribe(
      statusCallbacks(async (_account, _sid, url, method, params) => {
        sent.push({ url, method, ...params });
      }, logger),
    );
    const rooms = new ConferenceRooms({ publish: bus.publish });
    const callback = {
      url: 'http://cb/x',
      method: 'POST' as const,
      events: ['start', 'end', 'leave'] as const,
    };
    const a = rooms.enter(enter('CA1', { statusCallback: { ...callback, events: [...callback.events] } }))!;
    // A later participant's callback does not replace the first one's.
    const b = rooms.enter(
      enter('CA2', { statusCallback: { url: 'http://other/', method: 'GET', events: ['join'] } }),
    )!;
    b.exit();
    a.exit();
    await bus.drain();

    expect(writes[0]?.[0]).toBe('insert');
    expect(writes[0]?.[1]).toMatchObject({
      sid: a.conferenceSid,
      status: 'RUNNING_INITIALIZING',
      friendlyName: 'room',
    });
    const statuses = writes.slice(1).map((w) => (w[0] === 'update' ? w[2].status : null));
    expect(statuses).toEqual(['RUNNING_MODERATOR_PRESENT', 'COMPLETED']);
    expect(writes.at(-1)?.[2]).toMatchObject({
      reasonConferenceEnded: 'last-participant-left',
      callSidEndingConference: 'CA1',
    });

    expect(sent.map((p) => p.StatusCallbackEvent)).toEqual([
      'conference-start',
      'participant-leave',
      'participant-leave',
      'conference-end',
    ]);
    expect(sent.every((p) => p.url === 'http://cb/x' && p.ConferenceSid === a.conferenceSid)).toBe(true);
    const seq = sent.map((p) => Number(p.SequenceNumber));
    expect(seq).toEqual([...seq].sort((x, y) => x - y));
    expect(sent[1]).toMatchObject({
      CallSid: 'CA2',
      Muted: 'false',
      Hold: 'false',
      EndConferenceOnExit: 'false',
    });
    expect(sent.at(-1)).toMatchObject({
      ReasonConferenceEnded: 'last-participant-left',
      CallSidEndingConference: 'CA1',
    });
  });

  it('a failing store or callback is logged, not thrown, and later events still run', async () => {
    const sent: string[] = [];
    const bus = new ConferenceEventBus(logger);
    bus.subscribe(
      recordWriter(
        {
          insert: async () => {
            throw new Error('db down');
          },
          update: async () => {
            throw new Error('db down');
          },
        },
        logger,
      ),
    );
    bus.subscribe(
      statusCallbacks(async (_a, _s, _u, _m, p) => {
        sent.push(p.StatusCallbackEvent ?? '');
        throw new Error('unreachable');
      }, logger),
    );
    const rooms = new ConferenceRooms({ publish: bus.publish });
    const seat = rooms.enter(
      enter('CA1', { statusCallback: { url: 'http://cb/', method: 'POST', events: ['start', 'end'] } }),
    )!;
    seat.exit();
    await bus.drain();
    expect(sent).toEqual(['conference-start', 'conference-end']);
  });
});
