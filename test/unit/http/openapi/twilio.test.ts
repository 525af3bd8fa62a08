/** The 2010-04-01 part of the OpenAPI generator: schemas from the dialect's rules, operations from the surface's table. */
import { describe, expect, it } from 'vitest';
import { SCHEMAS } from '../../../../src/http/openapi/schemas.js';
import { twilioOperation, twilioPageSchema, twilioSchemas } from '../../../../src/http/openapi/twilio.js';
import { nativePath, TWILIO_RESOURCES, twilioTemplate } from '../../../../src/http/twilio/surface.js';

const A = '/2012-04-24/Accounts/:accountSid';

describe('Twilio schemas', () => {
  it('reshape the native schema by the dialect rules', () => {
    const s = twilioSchemas(SCHEMAS);
    // biome-ignore lint/suspicious/noExplicitAny: walked by member names
    const call = s.TwilioCall as any;
    expect(call.additionalProperties).toBe(false);
    expect(call.properties.duration).toEqual({ type: ['string', 'null'] });
    expect(call.properties.queue_time).toEqual({ const: '0' });
    expect(call.properties.to_formatted).toEqual(call.properties.to);
    expect(call.properties.uri.pattern).toBe('^/2010-04-01/Accounts/');
    expect(call.properties.subresource_uris.properties.recordings.pattern).toBe('^/2010-04-01/Accounts/');
    expect(call.required).toEqual(expect.arrayContaining(['to_formatted', 'trunk_sid', 'sid']));
    // biome-ignore lint/suspicious/noExplicitAny: walked by member names
    const recording = s.TwilioRecording as any;
    expect(recording.properties.duration).toEqual({ type: 'string' });
    expect(recording.properties.media_url).toEqual(recording.properties.file_uri);
    // biome-ignore lint/suspicious/noExplicitAny: walked by member names
    const app = s.TwilioApplication as any;
    expect(app.properties.voice_url.type).toEqual(['string', 'null']);
  });

  it('refuse a rule that reads a member the native schema lacks', () => {
    const properties = { ...(SCHEMAS.Call.properties as Record<string, unknown>) };
    delete properties.to;
    expect(() => twilioSchemas({ ...SCHEMAS, Call: { ...SCHEMAS.Call, properties } })).toThrow(/reads to/);
  });

  it('page with nullable links and no other member', () => {
    // biome-ignore lint/suspicious/noExplicitAny: walked by member names
    const page = twilioPageSchema('calls', 'TwilioCall') as any;
    expect(page.additionalProperties).toBe(false);
    expect(page.required.sort()).toEqual(
      [
        'calls',
        'end',
        'first_page_uri',
        'next_page_uri',
        'page',
        'page_size',
        'previous_page_uri',
        'start',
        'uri',
      ].sort(),
    );
    expect(page.properties.previous_page_uri.type).toEqual(['string', 'null']);
  });
});

describe('Twilio operations', () => {
  it('map every resource of the table both ways', () => {
    for (const [name, r] of Object.entries(TWILIO_RESOURCES)) {
      const t = twilioTemplate(`${A}/${r.native}/:sid`);
      expect(t).toEqual({ path: `/2010-04-01/Accounts/:accountSid/${name}/:sid`, resource: name });
      expect(nativePath('/2010-04-01/Accounts/AC1/' + name + '/X.json')?.path).toBe(
        `/2012-04-24/Accounts/AC1/${r.native}/X.json`,
      );
    }
    expect(twilioTemplate(`${A}/Clients`)).toBeNull();
    expect(twilioTemplate(A)).toEqual({ path: '/2010-04-01/Accounts/:accountSid', resource: null });
  });

  it('page whole native lists, drop refused members, add date filters and aliases', () => {
    const spec = { tag: 'Applications' };
    const list = twilioOperation(`${A}/Applications`, spec, 'GET', {
      summary: 'List applications',
      response: { kind: 'list', schema: 'Application' },
    });
    expect(list?.response).toEqual({ kind: 'page', schema: 'TwilioApplication', itemsKey: 'applications' });
    const create = twilioOperation(`${A}/Applications`, spec, 'POST', {
      summary: 'Create an application',
      params: [{ name: 'FriendlyName' }, { name: 'StatusCallback', type: 'url' }],
      response: { kind: 'one', schema: 'Application', status: 201 },
    });
    const names = create?.op.params?.map((p) => p.name);
    expect(names).toEqual(
      expect.arrayContaining(['FriendlyName', 'VoiceUrl', 'SmsUrl', 'VoiceCallerIdLookup']),
    );
    expect(names).not.toContain('StatusCallback');
    const sms = twilioOperation(`${A}/SMS/Messages`, { tag: 'SMS' }, 'GET', {
      summary: 'List SMS messages',
      response: { kind: 'page', schema: 'SmsMessage', key: 'messages' },
    });
    expect(sms?.path).toBe('/2010-04-01/Accounts/:accountSid/Messages');
    expect(sms?.op.params?.map((p) => p.name)).toEqual(['DateSent', 'DateSent>', 'DateSent<', 'PageToken']);
    expect(
      twilioOperation(
        `${A}/Clients`,
        { tag: 'Clients' },
        'GET',
        sms?.op ?? { summary: '', response: { kind: 'empty' } },
      ),
    ).toBeNull();
  });
});
