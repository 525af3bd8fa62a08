import { describe, expect, it } from 'vitest';
import { createActor, waitFor } from 'xstate';
import { createUssdMachine } from '../../../../src/actors/ussd/ussd.machine.js';
import type { UssdEmitted, UssdFetch, UssdInput } from '../../../../src/actors/ussd/ussd.types.js';
import { parseUssdData, UssdMessageType } from '../../../../src/actors/ussd/ussd-body.js';
import type { UssdEffects, UssdFetchOutcome } from '../../../../src/actors/ussd/ussd-effects.js';

/** Effects that record what the session did; markup documents are given per URL. */
function fakeEffects(documents: Record<string, UssdFetchOutcome>) {
  const log: string[] = [];
  const fetched: UssdFetch[] = [];
  const bodyOf = (body: string) => {
    const d = parseUssdData(body);
    return d?.errorCode ? `error-code ${d.errorCode}` : `${d?.type} ${JSON.stringify(d?.text)}`;
  };
  const effects: UssdEffects = {
    answer: (sid) => log.push(`answer ${sid}`),
    invite: (_s, body) => log.push(`INVITE ${bodyOf(body)}`),
    sendInfo: (_sid, body) => log.push(`INFO ${bodyOf(body)}`),
    hangUp: (_sid, body) => log.push(`BYE ${bodyOf(body)}`),
    fetchReply: async (_s, request) => {
      fetched.push(request);
      return documents[request.url] ?? { ok: false };
    },
  };
  return { effects, log, fetched };
}

const message = (text: string, action?: string): UssdFetchOutcome => ({
  ok: true,
  documentUrl: 'http://app.test/first',
  reply: {
    language: 'en',
    text,
    collect: action === undefined ? null : { action, method: 'POST' },
    tooLong: null,
  },
});

const input = (direction: UssdInput['direction']): UssdInput => ({
  sid: 'CA1',
  accountSid: 'AC1',
  direction,
  from: '+15550001111',
  to: '*777#',
  apiVersion: '2012-04-24',
  phoneNumberSid: null,
  createdAt: 0,
  fetch: { url: 'http://app.test/first', method: 'POST', fallback: null, params: [] },
  statusCallback: null,
});

const info = (type: string, text: string) => ({
  type: 'sip.info' as const,
  body: `<ussd-data><ussd-string value="${text}"/><anyExt><message-type>${type}</message-type></anyExt></ussd-data>`,
  at: 2,
});

describe('USSD session machine', () => {
  it('pull with a menu: answer, INFO, the reply to the action as Digits, the answer in the BYE', async () => {
    const f = fakeEffects({
      'http://app.test/first': message('1 Yes', 'next'),
      'http://app.test/next': message('Done'),
    });
    const ended: UssdEmitted[] = [];
    const actor = createActor(createUssdMachine(f.effects), { input: input('inbound') });
    actor.on('ussd.ended', (e) => ended.push(e));
    actor.start();
    expect(f.log).toEqual(['answer CA1']);
    actor.send({ type: 'sip.confirmed', at: 1 });
    await waitFor(actor, (s) => s.matches('awaiting'));
    actor.send(info(UssdMessageType.RequestResponse, '1'));
    await waitFor(actor, (s) => s.status === 'done');
    expect(f.log).toEqual([
      'answer CA1',
      'INFO unstructuredSSRequest_Request "1 Yes"',
      'BYE processUnstructuredSSRequest_Response "Done"',
    ]);
    expect(f.fetched[1]).toMatchObject({ url: 'http://app.test/next', params: [['Digits', '1']] });
    expect(ended.map((e) => (e.type === 'ussd.ended' ? e.status : e.type))).toEqual(['completed']);
  });

  it('push notify: the INVITE carries it; the notify response ends it once, with error code 1', async () => {
    const f = fakeEffects({ 'http://app.test/first': message('Hello') });
    const ended: UssdEmitted[] = [];
    const actor = createActor(createUssdMachine(f.effects), { input: input('outbound-api') });
    actor.on('ussd.ended', (e) => ended.push(e));
    actor.start();
    await waitFor(actor, (s) => s.matches('inviting'));
    actor.send({ type: 'sip.answered', at: 1 });
    actor.send(info(UssdMessageType.NotifyResponse, ''));
    actor.send(info(UssdMessageType.NotifyResponse, ''));
    expect(actor.getSnapshot().value).toBe('completed');
    expect(f.log).toEqual(['INVITE unstructuredSSNotify_Request "Hello"', 'BYE error-code 1']);
    expect(ended).toHaveLength(1);
  });

  it('a push whose markup cannot be fetched fails without sending anything; a refused INVITE fails', async () => {
    const none = fakeEffects({});
    const a = createActor(createUssdMachine(none.effects), { input: input('outbound-api') }).start();
    await waitFor(a, (s) => s.status === 'done');
    expect(a.getSnapshot().value).toBe('failed');
    expect(none.log).toEqual([]);
    const refused = fakeEffects({ 'http://app.test/first': message('Hello') });
    const b = createActor(createUssdMachine(refused.effects), { input: input('outbound-api') }).start();
    await waitFor(b, (s) => s.matches('inviting'));
    b.send({ type: 'sip.failed', status: 404, at: 1 });
    expect(b.getSnapshot()).toMatchObject({ value: 'failed', context: { sipStatus: 404 } });
  });

  it('the handset hanging up ends the session: completed when answered, canceled before', () => {
    const f = fakeEffects({});
    const early = createActor(createUssdMachine(f.effects), { input: input('inbound') }).start();
    early.send({ type: 'sip.bye', at: 1 });
    expect(early.getSnapshot().value).toBe('canceled');
    const late = createActor(createUssdMachine(f.effects), { input: input('inbound') }).start();
    late.send({ type: 'sip.confirmed', at: 1 });
    late.send({ type: 'sip.bye', at: 2 });
    expect(late.getSnapshot()).toMatchObject({ value: 'completed', context: { answeredAt: 1, endedAt: 2 } });
  });
});
