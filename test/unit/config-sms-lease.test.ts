/** SMS_LEASE_MS: the SMS resume lease (docs/sms.md "Durability, restart, de-duplication"). */
import { expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

it('SMS_LEASE_MS defaults to 10 s and is bounded to 500 ms – 10 min', () => {
  expect(loadConfig({}).smpp.leaseMs).toBe(10_000);
  expect(loadConfig({ SMS_LEASE_MS: '3000' }).smpp.leaseMs).toBe(3000);
  expect(() => loadConfig({ SMS_LEASE_MS: '100' })).toThrow(ConfigError);
  expect(() => loadConfig({ SMS_LEASE_MS: '600001' })).toThrow(ConfigError);
  expect(() => loadConfig({ SMS_LEASE_MS: '10s' })).toThrow(ConfigError);
});
