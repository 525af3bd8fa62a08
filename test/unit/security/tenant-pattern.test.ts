import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import {
  compileTenantPattern,
  TENANT_PATTERN_MAX_LENGTH,
  TenantPatternError,
  TenantPatternReason,
  tenantPatternProblem,
} from '../../../src/security/tenant-pattern.js';

const reasonOf = (pattern: string): unknown => {
  try {
    compileTenantPattern(pattern);
  } catch (e) {
    expect(e).toBeInstanceOf(TenantPatternError);
    return (e as TenantPatternError).reason;
  }
  return null;
};

describe('tenant patterns', () => {
  it.each<[string, string, boolean]>([
    ['uri.com', 'sip:bob@uri.com', true],
    ['^uri.*', 'sip:bob@uri.com', false],
    ['^uri.*', 'uri.example', true],
    ['^sip:\\+1', 'sip:+15551234567@gw', true],
    ['^sip:\\+1', 'sip:+4420@gw', false],
    ['@(?:gw|sbc)\\.example\\.com$', 'sip:+1@sbc.example.com', true],
    ['[0-9]{3}', 'sip:12@x', false],
    ['(?<n>\\d+)@', 'sip:42@x', true],
  ])('%s finds %s: %s (the JavaScript meaning, unanchored)', (pattern, text, expected) => {
    expect(compileTenantPattern(pattern).test(text)).toBe(expected);
    expect(new RegExp(pattern).test(text)).toBe(expected);
  });

  it.each<[string, TenantPatternReason]>([
    ['(', TenantPatternReason.Syntax],
    ['a)', TenantPatternReason.Syntax],
    ['[z-a]', TenantPatternReason.Syntax],
    ['a{1000}{1000}', TenantPatternReason.Syntax],
    ['a(?=b)', TenantPatternReason.Unsupported],
    ['a(?!b)', TenantPatternReason.Unsupported],
    ['(?<=a)b', TenantPatternReason.Unsupported],
    ['(?<!a)b', TenantPatternReason.Unsupported],
    ['(a)\\1', TenantPatternReason.Unsupported],
    ['(?<x>a)\\k<x>', TenantPatternReason.Unsupported],
    ['a'.repeat(TENANT_PATTERN_MAX_LENGTH + 1), TenantPatternReason.TooLong],
  ])('refuses %s (%s)', (pattern, reason) => {
    expect(reasonOf(pattern)).toBe(reason);
    expect(tenantPatternProblem(pattern)).toMatch(/\S/);
  });

  it('says why in a phrase fit for a 400', () => {
    expect(tenantPatternProblem('(')).toMatch(/^is not a valid regular expression \(missing \)/);
    expect(tenantPatternProblem('(?<=a)b')).toMatch(/^uses lookaround or a backreference/);
    expect(tenantPatternProblem(42)).toBe('must be a string');
    expect(tenantPatternProblem('^ok$')).toBeNull();
  });

  it('matches catastrophic patterns in linear time: the event loop keeps turning', async () => {
    // The histogram's own 10 ms timer must keep firing; backtracking would hold the thread for
    // minutes on these inputs.
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const results = [
      compileTenantPattern('(a+)+X').test('a'.repeat(30)),
      compileTenantPattern('(a|aa)+$').test(`${'a'.repeat(5000)}!`),
      compileTenantPattern('^(\\w+\\s?)*$').test(`${'word '.repeat(2000)}!`),
      compileTenantPattern('(a+)+X').test(`${'a'.repeat(30)}X`),
    ];
    await new Promise((r) => setTimeout(r, 50));
    delay.disable();
    expect(results).toEqual([false, false, false, true]);
    expect(delay.max).toBeLessThan(1e9);
  });

  it('reuses a compiled pattern', () => {
    expect(compileTenantPattern('^cached')).toBe(compileTenantPattern('^cached'));
  });
});
