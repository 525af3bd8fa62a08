/**
 * `<Refer>` in the interpreter: the REFER goes through the call control with the `<Sip>` target,
 * the action gets Twilio's parameters, and ReferCallStatus follows the NOTIFY's status.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { referCallStatus, referParams } from '../../../../../src/actors/interpreter/verbs/refer.js';
import { createHarness, type Harness, paramsOf, xml } from '../harness.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

describe('<Refer>', () => {
  it('answers, refers the caller to the <Sip> target and posts the outcome to action', async () => {
    h.server.script('/voice', {
      body: xml('<Refer action="/referred"><Sip>sip:carol@example.test</Sip></Refer>'),
    });
    h.server.script('/referred', { body: xml('<Hangup/>') });
    await h.run();
    expect(h.intents.slice(0, 2)).toEqual([
      { type: 'answer' },
      { type: 'refer', referTo: 'sip:carol@example.test' },
    ]);
    const p = paramsOf(h.server.requestsTo('/referred')[0]!);
    expect([p.get('ReferCallStatus'), p.get('ReferSipResponseCode'), p.get('NotifySipResponseCode')]).toEqual(
      ['in-progress', '202', '200'],
    );
  });

  it('without exactly one <Sip> the verb is skipped (schema warning), the next verb runs', async () => {
    h.server.script('/voice', { body: xml('<Refer action="/referred"></Refer><Hangup/>') });
    await h.run();
    expect(h.intents.filter((i) => i.type === 'refer')).toEqual([]);
    expect(h.server.requestsTo('/referred')).toEqual([]);
  });

  it('ReferCallStatus: 2xx in-progress, 486/600 busy, 487 no-answer, else failed; refused REFER failed', () => {
    const o = (referStatus: number, notifyStatus: number | null, ended = false) => ({
      referStatus,
      notifyStatus,
      ended,
    });
    expect(referCallStatus(o(202, 200))).toBe('in-progress');
    expect(referCallStatus(o(202, 486))).toBe('busy');
    expect(referCallStatus(o(202, 600))).toBe('busy');
    expect(referCallStatus(o(202, 487))).toBe('no-answer');
    expect(referCallStatus(o(202, 404))).toBe('failed');
    expect(referCallStatus(o(202, 100, true))).toBe('canceled');
    expect(referCallStatus(o(202, null))).toBeNull();
    expect(referParams(o(603, null))).toEqual([
      ['ReferCallStatus', 'failed'],
      ['ReferSipResponseCode', '603'],
    ]);
  });
});
