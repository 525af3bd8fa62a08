/**
 * MO faults through the whole service: an MO whose handling fails (text the store cannot hold) gets
 * an error deliver_sm_resp instead of a silent ESME_ROK, nothing is recorded, and the bind and the
 * process go on taking the next MO.
 */
import { afterEach, expect, it } from 'vitest';
import { CommandStatus } from '../../../src/smpp/errors.js';
import { type SmsWorld, startSmsWorld, stopSmsWorld, waitFor } from './support.js';

let w: SmsWorld | undefined;
afterEach(async () => {
  await stopSmsWorld(w);
  w = undefined;
});

it('an MO with NUL in its body is refused with ESME_RX_P_APPN; the next MO is taken (ESME_ROK, recorded)', async () => {
  w = await startSmsWorld({ label: 'smsmofault' });
  const world = w;
  world.hooks.script('/sms', { body: '<Response/>' });
  const binds = world.smsc.binds;
  // Latin-1 (data_coding 3) carries 0x00 as NUL; the store can never hold it.
  world.smsc.deliverMo({
    from: '15557650001',
    to: '14155550100',
    dataCoding: 3,
    udh: false,
    shortMessage: Buffer.from([0x68, 0x00, 0x69]),
  });
  await waitFor(() => world.smsc.moResps.length === 1, 5000, 'deliver_sm_resp');
  expect(world.smsc.moResps[0]?.status).toBe(CommandStatus.ESME_RX_P_APPN);

  world.smsc.deliverMo({
    from: '15557650002',
    to: '14155550100',
    dataCoding: 0,
    udh: false,
    shortMessage: Buffer.from('after the bad one'),
  });
  await waitFor(() => world.smsc.moResps.length === 2, 5000, 'second deliver_sm_resp');
  expect(world.smsc.moResps[1]?.status).toBe(CommandStatus.ESME_ROK);
  await waitFor(() => world.hooks.requestsTo('/sms').length === 1, 5000, 'SmsUrl fetch');

  const { items } = await world.ts.server.smsStore.list(
    { accountSid: world.owner.sid },
    { by: 'DateCreated', direction: 'asc' },
    { offset: 0, limit: 10 },
  );
  expect(items.map((m) => m.from)).toEqual(['+15557650002']);
  expect(world.smsc.binds).toBe(binds);
  expect(world.ts.server.smppLink?.bound).toBe(true);
});
