/**
 * Inbound PDUs against a local SMSC: an MO is answered with the outcome of its handling, a throw or
 * rejection ends that MO with an error command_status, and the bind keeps working for the next.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeMessage } from '../../../src/smpp/encoding.js';
import { CommandStatus, SmppError } from '../../../src/smpp/errors.js';
import { SmppCarrierLink } from '../../../src/smpp/link.js';
import type { SmppDeliverSmEvent } from '../../../src/smpp/port.js';
import { parseSmppUrl } from '../../../src/smpp/url.js';
import { TestSmsc } from '../../support/smsc.js';

const logger = pino({ level: 'silent' });
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ smsc: TestSmsc; link: SmppCarrierLink }> {
  const smsc = new TestSmsc();
  smsc.behaviour.accounts = { esme1: 'pw' };
  const port = await smsc.listen();
  cleanups.push(() => smsc.close());
  const cfg = parseSmppUrl(`smpp://esme1:pw@127.0.0.1:${port}?reconnect_min=0.05&reconnect_max=0.5`);
  const link = new SmppCarrierLink([cfg], { logger });
  cleanups.push(() => link.close());
  link.start();
  await waitFor(() => link.bound);
  return { smsc, link };
}

async function waitFor(pred: () => boolean, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error('waitFor timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const mo = (to: string, text = 'hello') => ({
  from: '15557654321',
  to,
  dataCoding: 0,
  udh: false,
  shortMessage: Buffer.from(text, 'latin1'),
});

describe('SMPP link: inbound handling is guarded per message', () => {
  it('a handler that throws or rejects gets an error deliver_sm_resp; the next MO and submits still work', async () => {
    const { smsc, link } = await setup();
    const seen: string[] = [];
    link.handleMo(async (e: SmppDeliverSmEvent) => {
      seen.push(e.to);
      if (e.to === '100') throw new Error('handler bug');
      if (e.to === '101') throw new SmppError(CommandStatus.ESME_RX_P_APPN, 'never storable');
      if (e.to === '102') await Promise.reject(new Error('database down'));
    });
    for (const to of ['100', '101', '102', '103']) {
      smsc.deliverMo(mo(to));
      await waitFor(() => smsc.moResps.some((r) => r.to === to));
    }
    expect(smsc.moResps).toEqual([
      { to: '100', status: CommandStatus.ESME_RX_T_APPN },
      { to: '101', status: CommandStatus.ESME_RX_P_APPN },
      { to: '102', status: CommandStatus.ESME_RX_T_APPN },
      { to: '103', status: CommandStatus.ESME_ROK },
    ]);
    expect(seen).toEqual(['100', '101', '102', '103']);
    // A synchronous throw (not an async function) is answered the same way.
    link.handleMo(() => {
      throw new Error('sync bug');
    });
    smsc.deliverMo(mo('104'));
    await waitFor(() => smsc.moResps.some((r) => r.to === '104'));
    expect(smsc.moResps.at(-1)?.status).toBe(CommandStatus.ESME_RX_T_APPN);
    expect(link.bound).toBe(true);
    expect(smsc.binds).toBe(1);
    const r = await link.submit({ from: '1', to: '2', body: 'still working' });
    expect(r.messageIds).toHaveLength(1);
  });

  it('the MO is answered only after its handler settles (acknowledged once recorded)', async () => {
    const { smsc, link } = await setup();
    let release!: () => void;
    link.handleMo(
      () =>
        new Promise<void>((r) => {
          release = r;
        }),
    );
    smsc.deliverMo(mo('200'));
    await waitFor(() => release !== undefined);
    await new Promise((r) => setTimeout(r, 100));
    expect(smsc.moResps).toHaveLength(0);
    release();
    await waitFor(() => smsc.moResps.length === 1);
    expect(smsc.moResps[0]?.status).toBe(CommandStatus.ESME_ROK);
  });

  it('a concatenated MO refused for now is completed by the SMSC repeating its last segment', async () => {
    const { smsc, link } = await setup();
    const text = `${'Segmented inbound message '.repeat(8)}end`;
    const { segments } = encodeMessage(text, 'auto', 9);
    expect(segments.length).toBe(2);
    const bodies: string[] = [];
    let fail = true;
    link.handleMo(async (e) => {
      if (fail) {
        fail = false;
        throw new Error('transient');
      }
      bodies.push(e.body);
    });
    const send = (i: number) =>
      smsc.deliverMo({
        from: '15557654321',
        to: '300',
        dataCoding: 0,
        udh: true,
        shortMessage: segments[i]!.shortMessage,
      });
    send(0);
    send(1);
    await waitFor(() => smsc.moResps.length === 2);
    expect(smsc.moResps.map((r) => r.status)).toEqual([CommandStatus.ESME_ROK, CommandStatus.ESME_RX_T_APPN]);
    send(1); // the SMSC's retry of the refused segment
    await waitFor(() => smsc.moResps.length === 3);
    expect(smsc.moResps[2]?.status).toBe(CommandStatus.ESME_ROK);
    expect(bodies).toEqual([text]);
  });
});
