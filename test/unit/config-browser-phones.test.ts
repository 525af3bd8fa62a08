import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('loadConfig: SIP over WSS', () => {
  it('is off by default, with no certificate', () => {
    const c = loadConfig({});
    expect(c.sip.wssPort).toBeNull();
    expect(c.sip.tlsCert).toBeNull();
    expect(c.sip.tlsKey).toBeNull();
  });

  it('reads the port and the certificate and key file paths', () => {
    const c = loadConfig({ SIP_WSS_PORT: '5063', TLS_CERT: '/etc/sb/cert.pem', TLS_KEY: '/etc/sb/key.pem' });
    expect(c.sip.wssPort).toBe(5063);
    expect(c.sip.tlsCert).toBe('/etc/sb/cert.pem');
    expect(c.sip.tlsKey).toBe('/etc/sb/key.pem');
  });

  it('refuses a WSS port without both files, and a port out of range', () => {
    expect(() => loadConfig({ SIP_WSS_PORT: '5063' })).toThrow(ConfigError);
    expect(() => loadConfig({ SIP_WSS_PORT: '5063', TLS_CERT: '/c.pem' })).toThrow(/TLS_CERT and TLS_KEY/);
    expect(() => loadConfig({ SIP_WSS_PORT: '70000', TLS_CERT: '/c', TLS_KEY: '/k' })).toThrow(
      /SIP_WSS_PORT/,
    );
  });
});
