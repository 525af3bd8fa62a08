import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import { parseForm } from '../../../src/http/params.js';
import { Items, Named, snakeCase, toJson, toXml } from '../../../src/http/render.js';

describe('snakeCase', () => {
  it.each([
    ['DateCreated', 'date_created'],
    ['SMSMessages', 'sms_messages'],
    ['Uri', 'uri'],
    ['VoiceCallerIdLookup', 'voice_caller_id_lookup'],
    ['AvailablePhoneNumbers', 'available_phone_numbers'],
    ['ApiVersion', 'api_version'],
    ['SubresourceUris', 'subresource_uris'],
  ])('%s → %s', (k, v) => expect(snakeCase(k)).toBe(v));
});

describe('renderers', () => {
  const dto = {
    Sid: 'AC1',
    Count: 3,
    Flag: false,
    Empty: null,
    Skipped: undefined,
    Nested: { VoiceCapable: true },
    List: new Items('Item', [{ Name: 'a' }, { Name: 'b' }]),
    Special: new Named('Initial Invite', 'sip:x'),
  };

  it('JSON: snake_case members, arrays for Items, explicit names kept, undefined dropped', () => {
    expect(toJson(dto)).toEqual({
      sid: 'AC1',
      count: 3,
      flag: false,
      empty: null,
      nested: { voice_capable: true },
      list: [{ name: 'a' }, { name: 'b' }],
      'Initial Invite': 'sip:x',
    });
  });

  it('XML: PascalCase elements under ServiceResponse, repeated item elements, escaping', () => {
    const out = toXml('Thing', { ...dto, Text: 'a<b>&"c"\u0001' });
    expect(out).toContain('<ServiceResponse><Thing><Sid>AC1</Sid><Count>3</Count><Flag>false</Flag><Empty/>');
    expect(out).toContain('<Nested><VoiceCapable>true</VoiceCapable></Nested>');
    expect(out).toContain('<List><Item><Name>a</Name></Item><Item><Name>b</Name></Item></List>');
    expect(out).toContain('<Text>a&lt;b&gt;&amp;"c"</Text>');
    expect(out).not.toContain('Skipped');
  });

  it('XML list with envelope attributes', () => {
    const out = toXml('Recordings', new Items('Recording', [{ Sid: 'RE1' }]), { page: 0, num_pages: 0 });
    expect(out).toContain(
      '<Recordings page="0" num_pages="0"><Recording><Sid>RE1</Sid></Recording></Recordings>',
    );
  });
});

describe('parseForm', () => {
  it('decodes +, percent escapes and repeated names', () => {
    const f = parseForm('A=1+2&B=%C3%A9&A=3&C&=x');
    expect(f.get('A')).toEqual(['1 2', '3']);
    expect(f.get('B')).toEqual(['é']);
    expect(f.get('C')).toEqual(['']);
  });

  it('refuses a malformed percent escape', () => {
    expect(() => parseForm('A=%E0%A4%A')).toThrow(AppError);
    expect(() => parseForm('%ZZ=1')).toThrow(/percent-encoding/);
  });
});
