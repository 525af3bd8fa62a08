/** Requests between nodes about conferences: a frame of the wrong shape is refused, never acted on. */
import { describe, expect, it } from 'vitest';
import { isConferenceRequest } from '../../../../src/actors/conference/remote-protocol.js';

describe('isConferenceRequest', () => {
  it('accepts the five requests in their shape', () => {
    const join = { callSid: 'CA1', accountSid: 'AC1', friendlyName: 'room' };
    expect(isConferenceRequest({ kind: 'conference.join', from: 'n1', join, sdp: 'v=0' })).toBe(true);
    expect(isConferenceRequest({ kind: 'conference.exit', callSid: 'CA1' })).toBe(true);
    expect(isConferenceRequest({ kind: 'conference.left', callSid: 'CA1' })).toBe(true);
    expect(isConferenceRequest({ kind: 'conference.get', accountSid: 'AC1', sid: 'CF1' })).toBe(true);
    expect(
      isConferenceRequest({
        kind: 'conference.command',
        accountSid: 'AC1',
        sid: 'CF1',
        event: { type: 'http.end', at: 1 },
      }),
    ).toBe(true);
  });

  it('refuses anything else', () => {
    for (const bad of [
      null,
      'conference.get',
      42,
      {},
      { kind: 'call.command', command: { sid: 'CA1' } },
      { kind: 'conference.join', from: 'n1', sdp: 'v=0' },
      { kind: 'conference.join', from: 'n1', join: null, sdp: 'v=0' },
      { kind: 'conference.join', from: 'n1', join: { callSid: 1, accountSid: 'AC1' }, sdp: 'v=0' },
      { kind: 'conference.exit' },
      { kind: 'conference.get', accountSid: 'AC1' },
      { kind: 'conference.command', accountSid: 'AC1', sid: 'CF1', event: null },
      { kind: 'conference.unknown' },
    ])
      expect(isConferenceRequest(bad), JSON.stringify(bad)).toBe(false);
  });
});
