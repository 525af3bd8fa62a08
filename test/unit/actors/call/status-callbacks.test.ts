/** Parameters of an incoming number's StatusCallback (spec §Events "Incoming phone number status"). */
import { describe, expect, it } from 'vitest';
import { numberStatusParams, type ProgressCall } from '../../../../src/actors/call/status-callbacks.js';

const call: ProgressCall = {
  sid: 'CA1',
  accountSid: 'AC1',
  from: 'sipp',
  to: '+15550001111',
  direction: 'inbound',
  apiVersion: '2012-04-24',
  forwardedFrom: null,
  callerName: null,
};

describe('numberStatusParams', () => {
  it('a plain call: the call parameters, InstanceId and CallTimestamp, nothing about Dial or transfer', () => {
    const p = numberStatusParams(call, 'ringing', 'node-1');
    expect(p).toMatchObject({ CallSid: 'CA1', CallStatus: 'ringing', InstanceId: 'node-1' });
    expect(Object.keys(p).filter((k) => /^(OutboundCallSid|DialSip|Refer|Transfer)/.test(k))).toEqual([]);
  });

  it('a call whose Dial reached a leg, then transferred: OutboundCallSid, DialSip*, ReferTarget/Transferor/Transferee', () => {
    const p = numberStatusParams(
      {
        ...call,
        dialed: { sid: 'CA2', sipCallId: 'abc@h', sipStatus: 486, sipHeaders: { 'X-Agent': '7' } },
        transfer: { referTarget: 'carol', transferor: 'bob', transferee: 'sipp' },
      },
      'completed',
      'node-1',
    );
    expect(p).toMatchObject({
      OutboundCallSid: 'CA2',
      DialSipCallId: 'abc@h',
      DialSipResponseCode: '486',
      'DialSipHeader_X-Agent': '7',
      ReferTarget: 'carol',
      Transferor: 'bob',
      Transferee: 'sipp',
    });
  });
});
