import { describe, expect, it } from 'vitest';
import { parseSmppUrl, parseSmppUrls, SmppUrlError } from '../../../src/smpp/url.js';

describe('SMPP_URL', () => {
  it('parses every option', () => {
    const c = parseSmppUrl(
      'smpp://sys:pw@smsc.example:2776?bind=transmitter&window=20&enquire_link=15&response_timeout=2.5&reconnect_min=0.5&reconnect_max=60&system_type=VMA&source_ton=5&source_npi=0&dest_ton=1&dest_npi=1&data_coding=8&registered_delivery=0',
    );
    expect(c).toMatchObject({
      host: 'smsc.example',
      port: 2776,
      tls: false,
      systemId: 'sys',
      password: 'pw',
      bind: 'transmitter',
      window: 20,
      enquireLinkMs: 15_000,
      responseTimeoutMs: 2_500,
      reconnectMinMs: 500,
      reconnectMaxMs: 60_000,
      systemType: 'VMA',
      sourceTon: 5,
      sourceNpi: 0,
      destTon: 1,
      destNpi: 1,
      dataCoding: 8,
      registeredDelivery: 0,
    });
  });

  it('has defaults (transceiver, window 10, enquire_link 30 s, auto coding, port 2775 / 3550 TLS)', () => {
    const c = parseSmppUrl('smpp://a:b@h');
    expect(c).toMatchObject({
      port: 2775,
      bind: 'transceiver',
      window: 10,
      enquireLinkMs: 30_000,
      dataCoding: 'auto',
    });
    expect(c.reconnectMinMs).toBe(1000);
    expect(c.reconnectMaxMs).toBe(30_000);
    expect(parseSmppUrl('ssmpp://a:b@h').port).toBe(3550);
  });

  it('splits comma-separated URLs', () => {
    expect(parseSmppUrls('smpp://a:b@h1:1, smpp://c:d@h2:2').map((c) => c.host)).toEqual(['h1', 'h2']);
    expect(parseSmppUrls(['smpp://a:b@h1:1,smpp://c:d@h2:2'])).toHaveLength(2);
  });

  it.each([
    ['http://a:b@h', /scheme/],
    ['smpp://h', /system_id/],
    ['smpp://a:b@h?window=0', /window/],
    ['smpp://a:b@h?window=x', /window/],
    ['smpp://a:b@h?bind=both', /bind/],
    ['smpp://a:b@h?data_coding=7', /data_coding/],
    ['smpp://a:b@h?colour=red', /unknown option colour/],
    ['smpp://a:123456789@h', /password/],
    ['smpp://a:b@h?reconnect_min=10&reconnect_max=1', /reconnect_min/],
    ['not a url', /not a URL/],
  ])('rejects %s', (url, msg) => {
    expect(() => parseSmppUrl(url)).toThrow(SmppUrlError);
    expect(() => parseSmppUrl(url)).toThrow(msg);
  });

  it('never puts the password in an error message', () => {
    try {
      parseSmppUrl('smpp://a:secretpw@h?window=0');
    } catch (e) {
      expect(String(e)).not.toContain('secretpw');
    }
    expect.assertions(1);
  });
});
