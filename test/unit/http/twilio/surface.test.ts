/** Request translation of the 2010-04-01 surface onto the native routes. */
import { describe, expect, it } from 'vitest';
import { nativeForm, nativePath } from '../../../../src/http/twilio/surface.js';

const AC = 'AC0123456789abcdef0123456789abcdef';

describe('nativePath', () => {
  it('maps each served resource, keeping the JSON suffix on the last segment', () => {
    expect(nativePath(`/2010-04-01/Accounts/${AC}/Messages.json`)).toEqual({
      path: `/2012-04-24/Accounts/${AC}/SMS/Messages.json`,
      resource: 'Messages',
      json: true,
    });
    expect(nativePath(`/2010-04-01/Accounts/${AC}/Calls/CA1/Recordings.json`)?.path).toBe(
      `/2012-04-24/Accounts/${AC}/Calls/CA1/Recordings.json`,
    );
    expect(nativePath(`/2010-04-01/Accounts/${AC}.json`)?.path).toBe(`/2012-04-24/Accounts/${AC}.json`);
    expect(nativePath(`/2010-04-01/Accounts/${AC}/Recordings/RE1.wav`)).toEqual({
      path: `/2012-04-24/Accounts/${AC}/Recordings/RE1.wav`,
      resource: 'Recordings',
      json: false,
    });
    expect(nativePath(`/2010-04-01/Accounts/${AC}/IncomingPhoneNumbers/Local.json`)?.path).toBe(
      `/2012-04-24/Accounts/${AC}/IncomingPhoneNumbers/Local.json`,
    );
  });

  it('leaves everything else alone (null → native 404)', () => {
    for (const p of [
      '/2010-04-01/Accounts.json',
      `/2010-04-01/Accounts/${AC}/Conferences.json`,
      `/2010-04-01/Accounts/${AC}/SMS/Messages.json`,
      `/2012-04-24/Accounts/${AC}/Calls.json`,
      '/2010-04-01/Other/x',
      '/2010-04-01',
    ]) {
      expect(nativePath(p)).toBeNull();
    }
  });
});

describe('nativeForm', () => {
  const form = (o: Record<string, string | string[]>) =>
    new Map(Object.entries(o).map(([k, v]) => [k, Array.isArray(v) ? v : [v]]));

  it('joins repeated StatusCallbackEvent members for the native parser', () => {
    const out = nativeForm(form({ StatusCallbackEvent: ['initiated', 'answered'] }), 'Calls', true);
    expect(out.get('StatusCallbackEvent')).toEqual(['initiated answered']);
  });

  it('maps VoiceUrl/SmsUrl onto RcmlUrl + Kind and VoiceCallerIdLookup on create', () => {
    const v = nativeForm(
      form({ FriendlyName: 'a', VoiceUrl: 'http://h/v', VoiceCallerIdLookup: 'true' }),
      'Applications',
      true,
    );
    expect(Object.fromEntries(v)).toEqual({
      FriendlyName: ['a'],
      RcmlUrl: ['http://h/v'],
      Kind: ['voice'],
      HasVoiceCallerIdLookup: ['true'],
    });
    const s = nativeForm(form({ SmsUrl: 'http://h/s', SmsMethod: 'post' }), 'Applications', false);
    expect(Object.fromEntries(s)).toEqual({ RcmlUrl: ['http://h/s'], Kind: ['sms'] });
    expect(
      Object.fromEntries(nativeForm(form({ VoiceUrl: 'http://h/v', SmsUrl: '' }), 'Applications', false)),
    ).toEqual({
      RcmlUrl: ['http://h/v'],
      Kind: ['voice'],
    });
    // Clearing the URL on update keeps the Kind.
    expect(Object.fromEntries(nativeForm(form({ VoiceUrl: '' }), 'Applications', false))).toEqual({
      RcmlUrl: [''],
    });
  });

  it('refuses members it cannot honour, naming them', () => {
    expect(() => nativeForm(form({ Twiml: '<Response/>' }), 'Calls', true)).toThrow(/Twiml/);
    expect(() => nativeForm(form({ MediaUrl: 'http://h/m' }), 'Messages', true)).toThrow(/MediaUrl/);
    expect(() => nativeForm(form({ VoiceMethod: 'GET' }), 'Applications', true)).toThrow(/VoiceMethod/);
    expect(() =>
      nativeForm(form({ VoiceUrl: 'http://h/v', SmsUrl: 'http://h/s' }), 'Applications', true),
    ).toThrow(/VoiceUrl or SmsUrl/);
    expect(() => nativeForm(form({ StatusCallback: 'http://h/s' }), 'Applications', true)).toThrow(
      /StatusCallback/,
    );
  });
});
