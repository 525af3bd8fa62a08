/** SipClientMessenger on a fake SIP port: MESSAGE built from the registered contact, result by requestId. */
import { describe, expect, it } from 'vitest';
import { SipClientMessenger } from '../../../../src/actors/sms/client-messenger.js';
import type { OutboundMessage } from '../../../../src/sip/port.js';

const delivery = {
  messageSid: 'SM1',
  accountSid: 'AC1',
  from: '+14155550100',
  login: 'alice',
  body: 'hello',
};

function setup(registered: boolean) {
  const sent: OutboundMessage[] = [];
  const messenger = new SipClientMessenger({
    sendMessage: (m) => sent.push(m),
    locate: async (_account, login) =>
      registered ? { requestUri: `sip:${login}@10.0.0.7:5062`, to: { uri: `sip:${login}@acme.test` } } : null,
    fromUri: (_account, from) => `sip:${from}@acme.test`,
  });
  return { sent, messenger };
}

describe('SipClientMessenger', () => {
  it('sends MESSAGE to the registered contact and resolves with the matching sip.messageResult', async () => {
    const { sent, messenger } = setup(true);
    const result = messenger.deliver(delivery);
    await new Promise((r) => setTimeout(r, 0));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      requestUri: 'sip:alice@10.0.0.7:5062',
      to: { uri: 'sip:alice@acme.test' },
      from: { uri: 'sip:+14155550100@acme.test' },
      body: 'hello',
      contentType: 'text/plain;charset=UTF-8',
      headers: { 'X-Switchboard-MessageSid': 'SM1' },
    });
    messenger.onSipEvent({ type: 'sip.messageResult', requestId: 'other', status: 500, reason: 'x' });
    messenger.onSipEvent({
      type: 'sip.messageResult',
      requestId: sent[0]!.requestId,
      status: 202,
      reason: 'Accepted',
    });
    await expect(result).resolves.toEqual({ status: 202, reason: 'Accepted' });
  });

  it('not registered → 480 without sending; abort → 487', async () => {
    const a = setup(false);
    await expect(a.messenger.deliver(delivery)).resolves.toMatchObject({ status: 480 });
    expect(a.sent).toHaveLength(0);
    const b = setup(true);
    const ctl = new AbortController();
    const p = b.messenger.deliver(delivery, ctl.signal);
    await new Promise((r) => setTimeout(r, 0));
    ctl.abort();
    await expect(p).resolves.toMatchObject({ status: 487 });
  });
});
