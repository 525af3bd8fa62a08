import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config.js';
import { LocalPoolProvider, parsePool } from '../../../src/numbers/provider.js';

const none = async () => false;

describe('LocalPoolProvider', () => {
  it('with no pool: any valid number, and area codes give +1 <area> 555 xxxx', async () => {
    const p = new LocalPoolProvider([]);
    expect(await p.find({ phoneNumber: '+442079460000' }, none)).toBe('+442079460000');
    expect(await p.find({ phoneNumber: '+44' }, none)).toBeNull();
    expect(await p.find({ areaCode: '415' }, none)).toMatch(/^\+1415555\d{4}$/);
    expect(await p.find({ phoneNumber: '+15551234567' }, async () => true)).toBeNull();
  });

  it('with a pool: only pool numbers, area codes within the pool, skipping taken ones', async () => {
    const p = new LocalPoolProvider(['+14155550100-+14155550102', '+1212*', '+442079460000']);
    expect(await p.find({ phoneNumber: '+14155550101' }, none)).toBe('+14155550101');
    expect(await p.find({ phoneNumber: '+14155550103' }, none)).toBeNull();
    expect(await p.find({ phoneNumber: '+442079460000' }, none)).toBe('+442079460000');
    expect(await p.find({ areaCode: '212' }, none)).toMatch(/^\+1212\d{7}$/);
    expect(await p.find({ areaCode: '303' }, none)).toBeNull();
    const taken = new Set(['+14155550100', '+14155550101']);
    expect(await p.find({ areaCode: '415' }, async (n) => taken.has(n))).toBe('+14155550102');
    taken.add('+14155550102');
    expect(await p.find({ areaCode: '415' }, async (n) => taken.has(n))).toBeNull();
  });

  it('refuses bad pool entries as configuration errors', () => {
    expect(() => parsePool(['5551234'])).toThrow(ConfigError);
    expect(() => parsePool(['+15550000009-+15550000001'])).toThrow(/range/);
    expect(() => parsePool(['+44*'])).toThrow(ConfigError);
  });
});
