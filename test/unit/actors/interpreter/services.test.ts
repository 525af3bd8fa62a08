import { describe, expect, it } from 'vitest';
import { isMarkupContentType } from '../../../../src/actors/interpreter/fetch-markup.js';
import { requestParams, resolveUrl } from '../../../../src/actors/interpreter/params.js';
import { MediaEventRouter } from '../../../../src/actors/interpreter/services.js';
import type { MediaEvent } from '../../../../src/media/port.js';
import { FakeMediaPort } from '../../../support/fake-media.js';

describe('MediaEventRouter', () => {
  it('delivers each event only to the listeners of its endpoint, until they unsubscribe', async () => {
    const media = new FakeMediaPort();
    const router = new MediaEventRouter(media);
    const a: MediaEvent[] = [];
    const b: MediaEvent[] = [];
    const offA = router.on('CA-a', (e) => a.push(e));
    router.on('CA-b', (e) => b.push(e));
    media.play('CA-a', 'op1', { kind: 'silence', ms: 10 });
    media.pressKey('CA-b', '7');
    await Promise.resolve();
    await Promise.resolve();
    expect(a.map((e) => e.type)).toEqual(['media.playDone']);
    expect(b).toEqual([{ type: 'media.dtmf', endpointId: 'CA-b', digit: '7' }]);
    offA();
    offA();
    media.play('CA-a', 'op2', { kind: 'silence', ms: 10 });
    await Promise.resolve();
    expect(a).toHaveLength(1);
    router.close();
    media.pressKey('CA-b', '8');
    await Promise.resolve();
    expect(b).toHaveLength(1);
  });
});

describe('request parameters and URLs', () => {
  const call = {
    callSid: 'CA1',
    accountSid: 'AC1',
    from: '+1555',
    to: '+1666',
    direction: 'outbound-dial' as const,
    endpointId: 'CA1',
    apiVersion: '2012-04-24',
    parentCallSid: 'CA0',
    forwardedFrom: null,
    callerName: null,
    extraParams: [['SipHeader_X-A', '1'] as const],
  };

  it('orders call parameters, optional ones only when known, then extras, then verb parameters', () => {
    expect(requestParams(call, 'in-progress', [['Digits', '12']])).toEqual([
      ['CallSid', 'CA1'],
      ['AccountSid', 'AC1'],
      ['From', '+1555'],
      ['To', '+1666'],
      ['CallStatus', 'in-progress'],
      ['ApiVersion', '2012-04-24'],
      ['Direction', 'outbound-dial'],
      ['ParentCallSid', 'CA0'],
      ['SipHeader_X-A', '1'],
      ['Digits', '12'],
    ]);
  });

  it('resolves relative URLs against the document and refuses other schemes', () => {
    expect(resolveUrl('next.xml', 'http://h/app/voice.xml')).toBe('http://h/app/next.xml');
    expect(resolveUrl('/root', 'https://h/app/x')).toBe('https://h/root');
    expect(resolveUrl('https://o/x', 'http://h/')).toBe('https://o/x');
    expect(resolveUrl('file:///etc/passwd', 'http://h/')).toBeNull();
    expect(resolveUrl('relative', null)).toBeNull();
  });

  it('accepts markup content types only', () => {
    for (const ok of [
      null,
      'text/xml',
      'application/xml; charset=utf-8',
      'TEXT/HTML',
      'text/plain',
      'application/rss+xml',
    ])
      expect(isMarkupContentType(ok), String(ok)).toBe(true);
    for (const bad of ['application/json', 'audio/wav', 'application/octet-stream'])
      expect(isMarkupContentType(bad), bad).toBe(false);
  });
});
