/** message/sipfrag bodies of REFER NOTIFYs (RFC 3420, RFC 3515 §2.4.5). */
import { describe, expect, it } from 'vitest';
import { sipfragOf, sipfragStatus } from '../../../src/sip/refer.js';

describe('sipfrag', () => {
  it('is one status line with the reason phrase', () => {
    expect(sipfragOf(100)).toBe('SIP/2.0 100 Trying\r\n');
    expect(sipfragOf(200)).toBe('SIP/2.0 200 OK\r\n');
    expect(sipfragOf(486)).toBe('SIP/2.0 486 Busy Here\r\n');
  });
  it('reads the status of a received body; anything else is null', () => {
    expect(sipfragStatus('SIP/2.0 180 Ringing\r\n')).toBe(180);
    expect(sipfragStatus('SIP/2.0 200 OK\r\nContact: <sip:x@y>\r\n')).toBe(200);
    expect(sipfragStatus('HTTP/1.1 200 OK')).toBeNull();
    expect(sipfragStatus(undefined)).toBeNull();
  });
});
