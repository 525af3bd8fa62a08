import { describe, expect, it } from 'vitest';
import {
  formatUssdData,
  isUssdContentType,
  parseUssdData,
  UssdMessageType,
} from '../../../../src/actors/ussd/ussd-body.js';

describe('ussd-data bodies', () => {
  it('reads a handset request; a missing type is a request response, a missing language en', () => {
    expect(
      parseUssdData(
        '<?xml version="1.0" encoding="UTF-8" ?>\n<ussd-data>\n\t<ussd-string value="*777*3#"/>\n</ussd-data>',
      ),
    ).toEqual({ language: 'en', text: '*777*3#', type: UssdMessageType.RequestResponse, errorCode: null });
  });

  it('reads the message type, the language and an error code', () => {
    const body =
      '<ussd-data><language value="fr"/><ussd-string value="1"/><anyExt><message-type>unstructuredSSNotify_Response</message-type></anyExt><error-code value="1"/></ussd-data>';
    expect(parseUssdData(body)).toEqual({
      language: 'fr',
      text: '1',
      type: UssdMessageType.NotifyResponse,
      errorCode: '1',
    });
  });

  it('refuses what is not ussd-data: malformed, another root, a DOCTYPE, empty', () => {
    expect(parseUssdData('<ussd-data><language')).toBeNull();
    expect(parseUssdData('<Response/>')).toBeNull();
    expect(parseUssdData('<!DOCTYPE x [<!ENTITY a "b">]><ussd-data/>')).toBeNull();
    expect(parseUssdData('')).toBeNull();
    expect(parseUssdData('v=0\r\n')).toBeNull();
  });

  it('writes newlines and markup characters so that they read back the same', () => {
    const text = 'Please press\n1 For <option1> & "more"';
    const body = formatUssdData({ language: 'en', text, type: UssdMessageType.RequestRequest });
    expect(body).not.toContain('\n');
    expect(body).toContain('&#10;');
    expect(parseUssdData(body)).toMatchObject({ text, type: UssdMessageType.RequestRequest });
    expect(formatUssdData({ errorCode: '1' })).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><ussd-data><error-code value="1"/></ussd-data>',
    );
  });

  it('knows its Content-Type with or without parameters', () => {
    expect(isUssdContentType('application/vnd.3gpp.ussd+xml')).toBe(true);
    expect(isUssdContentType('Application/VND.3gpp.ussd+xml; charset=UTF-8')).toBe(true);
    expect(isUssdContentType('application/sdp')).toBe(false);
  });
});
