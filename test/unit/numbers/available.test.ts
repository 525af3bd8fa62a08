import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config.js';
import {
  containsMatch,
  countryOfNumber,
  describeNumber,
  type NumberSearch,
  normalizeContains,
} from '../../../src/numbers/available.js';
import { LocalPoolProvider, parsePool } from '../../../src/numbers/provider.js';

const nothingTaken = async () => new Set<string>();
const search = (s: Partial<NumberSearch>): NumberSearch => ({
  country: 'US',
  kind: 'local',
  limit: 50,
  ...s,
});

describe('Contains', () => {
  it('maps keypad letters to digits and keeps * as any one digit', () => {
    expect(normalizeContains('STORM')).toBe('78676');
    expect(normalizeContains('55*1')).toBe('55*1');
    expect(normalizeContains('5+1')).toBeNull();
    expect(normalizeContains('')).toBeNull();
    expect(normalizeContains('1'.repeat(17))).toBeNull();
  });

  it('matches anywhere in the digits, * standing for exactly one digit', () => {
    expect(containsMatch('14155550123', '0123')).toBe(true);
    expect(containsMatch('14155550123', '555*1')).toBe(true);
    expect(containsMatch('14155550123', '555*2')).toBe(false);
    expect(containsMatch('14155550123', '4155550123999')).toBe(false);
  });
});

describe('describeNumber', () => {
  it('tells local, toll-free and mobile numbers and their country', () => {
    expect(describeNumber('+12125550123')).toMatchObject({ country: 'US', kind: 'local' });
    expect(describeNumber('+18005550123')).toMatchObject({ kind: 'tollfree' });
    expect(describeNumber('+33612345678')).toMatchObject({ country: 'FR', kind: 'mobile' });
    expect(describeNumber('+442071234567')).toMatchObject({ country: 'GB', kind: 'local' });
    expect(countryOfNumber('+15551000000')).toBe('US');
  });
});

describe('LocalPoolProvider.search', () => {
  it('open pool: fictional +1 NPA 555 numbers, by area code or toll-free; nothing elsewhere', async () => {
    const p = new LocalPoolProvider([]);
    const local = await p.search(search({ areaCode: '415', limit: 5 }), nothingTaken);
    expect(local).toHaveLength(5);
    for (const n of local) expect(n.phoneNumber).toMatch(/^\+1415555\d{4}$/);
    const free = await p.search(search({ kind: 'tollfree', limit: 3 }), nothingTaken);
    expect(free).toHaveLength(3);
    for (const n of free) expect(n.phoneNumber).toMatch(/^\+18(00|33|44|55|66|77|88)555\d{4}$/);
    expect(await p.search(search({ country: 'FR' }), nothingTaken)).toEqual([]);
    expect(await p.search(search({ kind: 'mobile' }), nothingTaken)).toEqual([]);
    expect(p.countries()).toEqual(['US', 'CA']);
  });

  it('pool: filters by kind, country, Contains and region, and leaves out taken numbers', async () => {
    const p = new LocalPoolProvider([
      '+14155550100-+14155550119@CA',
      '+12015550100-+12015550109@NJ',
      '+18005550100-+18005550104',
      '+33612345600-+33612345609',
    ]);
    expect(p.countries()).toEqual(['FR', 'US']);
    const all = await p.search(search({}), nothingTaken);
    expect(all).toHaveLength(30);
    const nj = await p.search(search({ inRegion: 'nj' }), nothingTaken);
    expect(nj.map((n) => n.phoneNumber).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `+1201555010${i}`),
    );
    for (const n of nj) expect(n).toMatchObject({ region: 'NJ', isoCountry: 'US', kind: 'local' });
    const contains = await p.search(search({ contains: '55501*9' }), nothingTaken);
    expect(contains.map((n) => n.phoneNumber).sort()).toEqual([
      '+12015550109',
      '+14155550109',
      '+14155550119',
    ]);
    const taken = new Set(['+14155550109']);
    const rest = await p.search(
      search({ contains: '55501*9' }),
      async (e164s) => new Set(e164s.filter((e) => taken.has(e))),
    );
    expect(rest.map((n) => n.phoneNumber).sort()).toEqual(['+12015550109', '+14155550119']);
    expect(await p.search(search({ kind: 'tollfree' }), nothingTaken)).toHaveLength(5);
    const mobile = await p.search(search({ country: 'FR', kind: 'mobile', limit: 4 }), nothingTaken);
    expect(mobile).toHaveLength(4);
    for (const n of mobile) expect(n.phoneNumber).toMatch(/^\+3361234560\d$/);
    expect(await p.search(search({ areaCode: '201', limit: 3 }), nothingTaken)).toHaveLength(3);
  });

  it('examines a bounded number of candidates in a huge pool', async () => {
    const p = new LocalPoolProvider(['+1*']);
    const none = await p.search(search({ contains: '999999999999' }), nothingTaken);
    expect(none).toEqual([]);
  });

  it('refuses a bad region label', () => {
    expect(() => parsePool(['+14155550100@'])).toThrow(ConfigError);
    expect(() => parsePool(['+14155550100@N;J'])).toThrow(/region/);
    expect(parsePool(['+14155550100@New Jersey'])[0]?.region).toBe('New Jersey');
  });
});
