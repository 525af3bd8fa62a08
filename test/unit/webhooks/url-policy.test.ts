import { describe, expect, it } from 'vitest';
import {
  blockedHostReason,
  blockedReason,
  parseWebhookUrl,
  RetryClass,
} from '../../../src/webhooks/url-policy.js';

const DEFAULTS = {
  connectTimeoutMs: 5000,
  readTimeoutMs: 15000,
  totalTimeoutMs: 15000,
  retries: 1,
  retryOn: [RetryClass.Connect],
};

describe('address policy', () => {
  it.each([
    '169.254.169.254',
    '169.254.0.1',
    'fe80::1',
    'fd00:ec2::254',
    '100.100.100.200',
    '0.0.0.0',
    '::',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '0:0:0:0:0:ffff:a9fe:a9fe',
    '::169.254.169.254',
    '64:ff9b::169.254.169.254',
    '64:ff9b::a9fe:a9fe',
    '224.0.0.1',
    '255.255.255.255',
  ])('always refuses %s', (ip) => {
    expect(blockedReason(ip, { blockPrivate: false })).not.toBeNull();
    expect(blockedReason(ip, { blockPrivate: true })).not.toBeNull();
  });

  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '::1',
    'fd12::1',
    '100.64.0.1',
    '::ffff:10.0.0.1',
  ])('allows %s unless blockPrivate', (ip) => {
    expect(blockedReason(ip, { blockPrivate: false })).toBeNull();
    expect(blockedReason(ip, { blockPrivate: true })).not.toBeNull();
  });

  it('allows public addresses', () => {
    expect(blockedReason('93.184.216.34', { blockPrivate: true })).toBeNull();
    expect(blockedReason('2606:2800:220:1::1', { blockPrivate: true })).toBeNull();
    expect(blockedReason('172.32.0.1', { blockPrivate: true })).toBeNull();
    expect(blockedReason('64:ff9b::5db8:d822', { blockPrivate: true })).toBeNull();
  });

  it('refuses metadata host names', () => {
    expect(blockedHostReason('metadata.google.internal')).not.toBeNull();
    expect(blockedHostReason('METADATA.GOOGLE.INTERNAL.')).not.toBeNull();
    expect(blockedHostReason('example.com')).toBeNull();
  });
});

describe('parseWebhookUrl', () => {
  it('strips the fragment and applies ct/rt/tt/rc/rp overrides', () => {
    const t = parseWebhookUrl('https://h.test/a?x=1#ct=200&rt=300&tt=400&rc=3&rp=ct,5xx', DEFAULTS);
    expect(t?.url.href).toBe('https://h.test/a?x=1');
    expect(t?.settings).toEqual({
      connectTimeoutMs: 200,
      readTimeoutMs: 300,
      totalTimeoutMs: 400,
      retries: 3,
      retryOn: [RetryClass.Connect, RetryClass.Status5xx],
    });
    expect(t?.ignoredOverrides).toEqual([]);
  });

  it('ignores out-of-range and unknown overrides, keeping defaults', () => {
    const t = parseWebhookUrl('http://h.test/#ct=50&rc=9&tt=abc&e=ashburn&rp=bogus', DEFAULTS);
    expect(t?.settings).toEqual(DEFAULTS);
    expect(t?.ignoredOverrides).toEqual(['ct', 'rc', 'tt', 'e', 'rp']);
  });

  it('rejects non-http schemes and garbage', () => {
    expect(parseWebhookUrl('ftp://h.test/', DEFAULTS)).toBeNull();
    expect(parseWebhookUrl('file:///etc/passwd', DEFAULTS)).toBeNull();
    expect(parseWebhookUrl('not a url', DEFAULTS)).toBeNull();
    expect(parseWebhookUrl('/relative', DEFAULTS)).toBeNull();
  });
});
