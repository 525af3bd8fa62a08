import { describe, expect, it } from 'vitest';
import { CommandStatus, errorCodeForStatus, mapReceiptStat, SmppError } from '../../../src/smpp/errors.js';
import { ReassemblyBuffer } from '../../../src/smpp/reassembly.js';
import { normaliseMessageId, parseReceiptText } from '../../../src/smpp/receipt.js';

describe('receipt text', () => {
  it('parses the SMPP v3.4 Appendix B format', () => {
    const r = parseReceiptText(
      'id:0123456789 sub:001 dlvrd:001 submit date:2611221200 done date:2611221201 stat:DELIVRD err:000 text:Hello id:x stat:y',
    );
    expect(r).toEqual({
      id: '0123456789',
      sub: '001',
      dlvrd: '001',
      submitDate: '2611221200',
      doneDate: '2611221201',
      stat: 'DELIVRD',
      err: '000',
      text: 'Hello id:x stat:y',
    });
  });

  it('accepts other field orders and case; rejects non-receipts', () => {
    expect(parseReceiptText('STAT:undeliv ID:ab12 err:001')).toMatchObject({
      id: 'ab12',
      stat: 'UNDELIV',
      err: '001',
    });
    expect(parseReceiptText('hello there')).toBeNull();
    expect(parseReceiptText('id:1 sub:001')).toBeNull();
  });

  it('normalises ids (case, leading zeros)', () => {
    expect(normaliseMessageId('000ABC')).toBe('abc');
    expect(normaliseMessageId('0')).toBe('0');
  });
});

describe('error mapping (spec §SMS providers failure codes)', () => {
  it.each([
    ['DELIVRD', '000', 'delivered', null],
    ['UNDELIV', '001', 'undelivered', 30005],
    ['UNDELIV', '027', 'undelivered', 30003],
    ['EXPIRED', '000', 'undelivered', 30003],
    ['REJECTD', '000', 'failed', 30007],
    ['DELETED', '000', 'failed', 30004],
    ['UNKNOWN', '000', 'failed', 30008],
    ['ENROUTE', '000', 'pending', null],
  ])('%s err %s → %s %s', (stat, err, outcome, code) => {
    expect(mapReceiptStat(stat, err)).toEqual({ outcome, errorCode: code });
  });

  it('maps command_status', () => {
    expect(errorCodeForStatus(CommandStatus.ESME_RMSGQFUL)).toBe(30001);
    expect(errorCodeForStatus(CommandStatus.ESME_RINVDSTADR)).toBe(30005);
    expect(errorCodeForStatus(CommandStatus.ESME_RINVSRCADR)).toBe(30007);
    expect(errorCodeForStatus(0x61)).toBe(30008);
    const e = new SmppError(0x58);
    expect(e.commandStatus).toBe(0x58);
    expect(e.errorCode).toBe(30008);
  });
});

describe('reassembly buffer', () => {
  it('reassembles out of order and is bounded by entries and time', () => {
    let now = 0;
    const expired: string[] = [];
    const buf = new ReassemblyBuffer({
      timeoutMs: 1000,
      maxEntries: 2,
      now: () => now,
      onExpired: (k) => expired.push(k),
    });
    const seg = (ref: number, seq: number, text: string) => ({
      source: 'a',
      destination: 'b',
      ref,
      total: 2,
      seq,
      text,
    });
    expect(buf.add(seg(1, 2, 'B'))).toBeNull();
    expect(buf.add(seg(1, 1, 'A'))).toBe('AB');
    expect(buf.size).toBe(0);
    buf.add(seg(2, 1, 'x'));
    buf.add(seg(3, 1, 'y'));
    buf.add(seg(4, 1, 'z'));
    expect(buf.size).toBe(2);
    expect(expired).toEqual(['a|b|2|2']);
    now = 5000;
    buf.sweep();
    expect(buf.size).toBe(0);
    expect(buf.add(seg(5, 3, 'bad'))).toBeNull();
    expect(buf.size).toBe(0);
  });
});
