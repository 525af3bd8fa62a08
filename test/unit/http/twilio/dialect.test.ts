/** The Twilio JSON dialect: URIs, page envelope and member mapping. */
import { describe, expect, it } from 'vitest';
import { twilioDialect, twilioUri } from '../../../../src/http/twilio/dialect.js';

const AC = 'AC0123456789abcdef0123456789abcdef';
// The dialect reads the request only for lists the native surface returns whole.
const res = {} as Parameters<typeof twilioDialect.page>[0];

describe('twilioUri', () => {
  it('renames version, SMS/Messages and the AfterSid cursor; "null" becomes null', () => {
    expect(
      twilioUri(`/2012-04-24/Accounts/${AC}/SMS/Messages.json?To=1&Page=1&PageSize=1&AfterSid=SM9`),
    ).toBe(`/2010-04-01/Accounts/${AC}/Messages.json?To=1&Page=1&PageSize=1&PageToken=PASM9`);
    expect(twilioUri(`http://127.0.0.1:1/2012-04-24/Accounts/${AC}/Recordings/RE1.wav`)).toBe(
      `http://127.0.0.1:1/2010-04-01/Accounts/${AC}/Recordings/RE1.wav`,
    );
    expect(twilioUri('null')).toBeNull();
    expect(twilioUri(null)).toBeNull();
  });
});

describe('twilioDialect', () => {
  it('reshapes a page: JSON null links, no num_pages/total/last_page_uri, mapped items', () => {
    const env = {
      page: 0,
      num_pages: 0,
      page_size: 50,
      total: 1,
      start: 0,
      end: 0,
      uri: `/2012-04-24/Accounts/${AC}/SMS/Messages.json?Page=0&PageSize=50`,
      first_page_uri: `/2012-04-24/Accounts/${AC}/SMS/Messages.json?Page=0&PageSize=50`,
      previous_page_uri: 'null',
      next_page_uri: 'null',
      last_page_uri: `/2012-04-24/Accounts/${AC}/SMS/Messages.json?Page=0&PageSize=50`,
    };
    const out = twilioDialect.page(res, 'SMSMessages', env, 'messages', [
      {
        sid: 'SM1',
        direction: 'incoming',
        error_code: '30005',
        uri: `/2012-04-24/Accounts/${AC}/SMS/Messages/SM1.json`,
      },
    ]) as Record<string, unknown>;
    expect(out).toEqual({
      uri: `/2010-04-01/Accounts/${AC}/Messages.json?Page=0&PageSize=50`,
      first_page_uri: `/2010-04-01/Accounts/${AC}/Messages.json?Page=0&PageSize=50`,
      next_page_uri: null,
      previous_page_uri: null,
      page: 0,
      page_size: 50,
      start: 0,
      end: 0,
      messages: [
        {
          sid: 'SM1',
          direction: 'inbound',
          error_code: 30005,
          num_media: '0',
          messaging_service_sid: null,
          uri: `/2010-04-01/Accounts/${AC}/Messages/SM1.json`,
        },
      ],
    });
  });

  it('maps calls, numbers, recordings and applications to Twilio members', () => {
    const call = twilioDialect.resource(res, 'Call', {
      sid: 'CA1',
      to: '+1',
      from: '+2',
      duration: 7,
    }) as Record<string, unknown>;
    expect(call).toMatchObject({ duration: '7', to_formatted: '+1', from_formatted: '+2' });
    const n = twilioDialect.resource(res, 'IncomingPhoneNumber', {
      capabilities: { voice_capable: true, sms_capable: true, mms_capable: false, fax_capable: false },
    }) as Record<string, unknown>;
    expect(n.capabilities).toEqual({ voice: true, sms: true, mms: false, fax: false });
    const r = twilioDialect.resource(res, 'Recording', {
      duration: 3,
      date_created: 'x',
      file_uri: `http://h/2012-04-24/Accounts/${AC}/Recordings/RE1.wav`,
    }) as Record<string, unknown>;
    expect(r).toMatchObject({
      duration: '3',
      start_time: 'x',
      media_url: `http://h/2010-04-01/Accounts/${AC}/Recordings/RE1.wav`,
    });
    const a = twilioDialect.resource(res, 'Application', { kind: 'sms', rcml_url: 'http://h/s' }) as Record<
      string,
      unknown
    >;
    expect(a).toMatchObject({ voice_url: null, sms_url: 'http://h/s' });
  });

  it('leaves error bodies as they are', () => {
    const e = { code: 20404, message: 'x', more_info: 'y', status: 404 };
    expect(twilioDialect.resource(res, 'RestException', e)).toBe(e);
  });
});
