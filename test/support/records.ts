/** Records written straight to a store by tests that need one without the path that makes it. */
import { newSid, SidPrefix } from '../../src/ids.js';
import type { SmsMessage } from '../../src/store/sms-store.js';

/** An inbound SMS record of `accountSid`: a fresh sid and `received` defaults, then `fields`. */
export function receivedSms(accountSid: string, fields: Partial<SmsMessage> = {}): SmsMessage {
  const now = new Date();
  return {
    sid: newSid(SidPrefix.Sms),
    accountSid,
    from: '+15550002222',
    to: '+15550001111',
    body: 'fixture',
    status: 'received',
    direction: 'incoming',
    channel: 'smpp',
    price: null,
    priceUnit: 'USD',
    apiVersion: '2012-04-24',
    errorCode: null,
    errorMessage: null,
    statusCallback: null,
    destinationNetworkId: null,
    segments: 1,
    possibleDuplicate: false,
    dateSent: now,
    dateCreated: now,
    dateUpdated: now,
    ...fields,
  };
}
