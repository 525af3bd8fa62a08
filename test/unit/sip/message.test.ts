import { describe, expect, it } from 'vitest';
import { userOf } from '../../../src/sip/message.js';

describe('userOf (read with src/sip/sip-uri.ts)', () => {
  it.each<[string, string | undefined]>([
    ['sip:alice@example.com', 'alice'],
    ['sips:bob%40home@example.com:5061;transport=tls', 'bob@home'],
    ['sip:+15550100001@[2001:db8::1]:5080', '+15550100001'],
    ['sip:example.com', undefined],
    ['sip:a@b@c', undefined],
    ['sip:%ZZ@h', undefined],
    ['not a uri', undefined],
  ])('%s → %s', (uri, user) => {
    expect(userOf(uri)).toBe(user);
  });
});
