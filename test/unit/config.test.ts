import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, redactUrl } from '../../src/config.js';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c.http.port).toBe(8080);
    expect(c.database.url).toBe('postgres://127.0.0.1:5432/switchboard');
    expect(c.redis.url).toBe('redis://127.0.0.1:6379');
    expect(c.http.publicUrl).toBe('http://127.0.0.1:8080');
    expect(c.admin.password).toBeUndefined();
    expect(Object.isFrozen(c.http)).toBe(true);
  });

  it('reads the environment and strips a trailing slash from PUBLIC_URL', () => {
    const c = loadConfig({ HTTP_PORT: '9000', PUBLIC_URL: 'https://api.example.com/', REDIS_PREFIX: 'x' });
    expect(c.http.port).toBe(9000);
    expect(c.http.publicUrl).toBe('https://api.example.com');
    expect(c.redis.prefix).toBe('x');
  });

  it('reads the WebRTC media settings', () => {
    expect(loadConfig({}).media).toMatchObject({
      webrtcPublicAddresses: [],
      webrtcCodecs: ['opus', 'PCMU', 'PCMA'],
    });
    const c = loadConfig({ WEBRTC_PUBLIC_ADDRESS: '203.0.113.7, 198.51.100.2', WEBRTC_CODECS: 'pcmu,Opus' });
    expect(c.media.webrtcPublicAddresses).toEqual(['203.0.113.7', '198.51.100.2']);
    expect(c.media.webrtcCodecs).toEqual(['PCMU', 'opus']);
    expect(() => loadConfig({ WEBRTC_PUBLIC_ADDRESS: 'media.example.com' })).toThrow(/WEBRTC_PUBLIC_ADDRESS/);
    expect(() => loadConfig({ WEBRTC_CODECS: 'opus,G729' })).toThrow(/WEBRTC_CODECS/);
  });

  it('refuses values it cannot use, naming the variable', () => {
    expect(() => loadConfig({ HTTP_PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ HTTP_PORT: '70000' })).toThrow(/HTTP_PORT/);
    expect(() => loadConfig({ WEBHOOK_BLOCK_PRIVATE: 'maybe' })).toThrow(/WEBHOOK_BLOCK_PRIVATE/);
    expect(() => loadConfig({ DATABASE_URL: 'not a url' })).toThrow(/not a URL/);
    expect(() => loadConfig({ SIP_PUBLIC_ADDRESS: 'sip.example.com:5080' })).toThrow(/SIP_PUBLIC_ADDRESS/);
    expect(() => loadConfig({ SIP_HOST: 'bad host' })).toThrow(/SIP_PUBLIC_ADDRESS/);
    // Other nodes reach this one at its public address: a wildcard names no node.
    expect(() => loadConfig({ SIP_HOST: '0.0.0.0' })).toThrow(/SIP_PUBLIC_ADDRESS must name this node/);
    expect(() => loadConfig({ SIP_PUBLIC_ADDRESS: '::' })).toThrow(/SIP_PUBLIC_ADDRESS must name this node/);
    expect(loadConfig({ SIP_HOST: '0.0.0.0', SIP_PUBLIC_ADDRESS: '10.0.0.5' }).sip.publicAddress).toBe(
      '10.0.0.5',
    );
    for (const host of ['sip.example.com', '203.0.113.7', '2001:db8::7', '[2001:db8::7]']) {
      expect(loadConfig({ SIP_PUBLIC_ADDRESS: host }).sip.publicAddress).toBe(host);
    }
  });

  it('validates SMPP_URL and SMTP_URL at start-up, without printing passwords', () => {
    expect(() => loadConfig({ SMPP_URL: 'smpp://sys:pw@127.0.0.1:2775?window=0' })).toThrow(
      /window.*entry 1/,
    );
    expect(() => loadConfig({ SMPP_URL: 'smpp://sys:secretpw@h:1?nope=1' })).toThrow(ConfigError);
    expect(() => loadConfig({ SMPP_URL: 'smpp://sys:secretpw@h:1?nope=1' })).not.toThrow(/secretpw/);
    expect(() => loadConfig({ SMTP_URL: 'http://mail' })).toThrow(/SMTP_URL/);
    expect(() => loadConfig({ SMTP_URL: 'nonsense' })).toThrow(/SMTP_URL/);
    const c = loadConfig({ SMPP_URL: 'smpp://a:b@h:1,smpp://c:d@h:2', SMTP_URL: 'smtp://u:p@mail:587' });
    expect(c.smpp.urls).toHaveLength(2);
    expect(c.smtp.url).toBe('smtp://u:p@mail:587');
  });

  it('redacts passwords in URLs', () => {
    expect(redactUrl('redis://u:secret@h:1')).toBe('redis://u:***@h:1');
    expect(redactUrl('postgres://u:secret@h:1/db')).not.toContain('secret');
  });
});

describe('REDIS_CLUSTER_NODES', () => {
  it('lists host:port root nodes, empty without it, and refuses anything else', () => {
    expect(loadConfig({}).redis.clusterNodes).toEqual([]);
    expect(
      loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b:7001,[::1]:7002' }).redis.clusterNodes,
    ).toEqual(['10.0.0.1:7000', 'redis-b:7001', '[::1]:7002']);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'redis://10.0.0.1:7000' })).toThrow(/REDIS_CLUSTER_NODES/);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1' })).toThrow(/REDIS_CLUSTER_NODES/);
  });
});
