import { describe, expect, it } from 'vitest';
import { gatewayTarget } from '../../../src/sip/gateways.js';

describe('gatewayTarget (a Gateway Proxy read with src/sip/sip-uri.ts)', () => {
  it.each<[string, string | null, ReturnType<typeof gatewayTarget>]>([
    [
      'gw.example.com',
      'trunk1',
      { registrar: 'sip:gw.example.com', aor: 'sip:trunk1@gw.example.com', transport: 'UDP' },
    ],
    [
      '127.0.0.2:5060',
      null,
      { registrar: 'sip:127.0.0.2:5060', aor: 'sip:switchboard@127.0.0.2', transport: 'UDP' },
    ],
    [
      'sip:gw.example.com:5080;transport=TCP',
      '+15550100001',
      {
        registrar: 'sip:gw.example.com:5080;transport=tcp',
        aor: 'sip:+15550100001@gw.example.com',
        transport: 'TCP',
      },
    ],
    [
      '[2001:db8::1]:5060',
      'a b',
      { registrar: 'sip:[2001:db8::1]:5060', aor: 'sip:a%20b@[2001:db8::1]', transport: 'UDP' },
    ],
    ['not a host!', 'x', null],
    ['tel:+15550100001', 'x', null],
  ])('%s', (proxy, userName, expected) => {
    expect(gatewayTarget({ proxy, userName })).toEqual(expected);
  });
});
