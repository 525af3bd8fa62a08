import { describe, expect, it } from 'vitest';
import {
  ConfigurationDataError,
  dottedPath,
  jsonPointer,
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
});
