import { describe, expect, it } from 'vitest';
import { dottedPath, jsonPointer } from '../../../src/json-members.js';
import {
  ConfigurationDataError,
  parseConfigurationData,
  validateMultiProvider,
} from '../../../src/profiles/multi-provider.js';

const voice = (proxy: Record<string, unknown>) => ({
  'outbound-voice': [{ proxy: [{ uri: 'sip:gw', ...proxy }] }],
});

const errorOf = (fn: () => unknown): ConfigurationDataError => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigurationDataError);
    return e as ConfigurationDataError;
  }
  throw new Error('did not throw');
};

describe('multi-provider configuration data', () => {
  it('formats member paths for ConfigurationData and for profile documents', () => {
    const path = ['multiprovider', 'outbound-voice', 0, 'proxy', 1, 'match'];
    expect(dottedPath(path)).toBe('.multiprovider.outbound-voice[0].proxy[1].match');
    expect(jsonPointer(path)).toBe('/multiprovider/outbound-voice/0/proxy/1/match');
    expect(jsonPointer(['a/b', 'c~d'])).toBe('/a~1b/c~0d');
  });

  it.each([
    ['(', /is not a valid regular expression/],
    ['x(?<=y)', /lookaround or a backreference/],
    ['(x)\\1', /lookaround or a backreference/],
  ])('refuses the match %s, naming the member', (match, problem) => {
    const e = errorOf(() => parseConfigurationData(JSON.stringify(voice({ match }))));
    expect(e.path).toEqual(['outbound-voice', 0, 'proxy', 0, 'match']);
    expect(e.problem).toMatch(problem);
    expect(e.message).toMatch(/^ConfigurationData\.outbound-voice\[0\]\.proxy\[0\]\.match: /);
  });

  it('prefixes the path of a configuration nested in a profile', () => {
    const e = errorOf(() => validateMultiProvider(voice({ match: '(' }), ['multiprovider']));
    expect(jsonPointer(e.path)).toBe('/multiprovider/outbound-voice/0/proxy/0/match');
  });

  it('accepts patterns that only a backtracking engine finds slow', () => {
    expect(validateMultiProvider(voice({ match: '(a+)+X' }))).toEqual(voice({ match: '(a+)+X' }));
  });

  it.each<[string, unknown, (string | number)[], RegExp]>([
    ['NUL in match', voice({ match: 'a\u0000' }), ['outbound-voice', 0, 'proxy', 0, 'match'], /control/],
    [
      'a line break in uri',
      voice({ uri: 'sip:gw\r\nX: y' }),
      ['outbound-voice', 0, 'proxy', 0, 'uri'],
      /control/,
    ],
    [
      'a lone surrogate in password',
      voice({ password: 'p\ud800' }),
      ['outbound-voice', 0, 'proxy', 0, 'password'],
      /lone surrogate/,
    ],
    [
      'NUL in an unknown proxy member',
      voice({ extra: { deep: ['\u0000'] } }),
      ['outbound-voice', 0, 'proxy', 0, 'extra', 'deep', 0],
      /NUL/,
    ],
    [
      'a lone surrogate in a member name',
      voice({ extra: { '\udc00': 1 } }),
      ['outbound-voice', 0, 'proxy', 0, 'extra'],
      /member name/,
    ],
  ])('refuses %s, which neither SIP nor Postgres can carry', (_, value, path, problem) => {
    const e = errorOf(() => validateMultiProvider(value));
    expect(e.path).toEqual(path);
    expect(e.problem).toMatch(problem);
  });

  it('scans deeply nested unknown members without exhausting the stack; messages stay short', () => {
    const depth = 30_000; // about what the 64 KB form body limit allows
    const deep = `${'['.repeat(depth)}"\\u0000"${']'.repeat(depth)}`;
    const text = `{"outbound-voice":[{"proxy":[{"uri":"sip:gw","extra":${deep}}]}]}`;
    const e = errorOf(() => parseConfigurationData(text));
    expect(e.path).toHaveLength(5 + depth);
    expect(e.problem).toMatch(/NUL/);
    expect(e.message.length).toBeLessThan(300);
    expect(e.message).toMatch(/^ConfigurationData\.outbound-voice\[0\]\.proxy\[0\]\.extra\[0\].*…: must not/);
  });
});
