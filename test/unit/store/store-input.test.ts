/** The store's text check and its column naming (no database: the check runs before any I/O). */
import { describe, expect, it } from 'vitest';
import { assertStorableParameters, columnOfParameter } from '../../../src/store/postgres/db.js';
import { invalidTextReason, StoreInputError } from '../../../src/store/store-errors.js';

describe('invalidTextReason', () => {
  it.each([
    ['plain', null],
    ['emoji \uD83D\uDE00', null],
    ['', null],
    ['a\u0000b', 'nul'],
    ['\uD800', 'lone-surrogate'],
    ['x\uDC00', 'lone-surrogate'],
    ['\uDE00\uD83D', 'lone-surrogate'],
  ])('%j → %s', (s, r) => expect(invalidTextReason(s)).toBe(r));
});

describe('assertStorableParameters', () => {
  it('names the column of an UPDATE SET and of an INSERT tuple member', () => {
    const upd = 'UPDATE applications SET "friendly_name" = $1, date_updated = now() WHERE sid = $2';
    expect(() => assertStorableParameters(upd, ['a\u0000', 'AP1'])).toThrow(StoreInputError);
    expect(columnOfParameter(upd, 1)).toBe('friendly_name');
    expect(columnOfParameter(upd, 2)).toBe('sid');
    const ins = 'INSERT INTO t (sid, account_sid, body) VALUES ($1, $2, $3), ($4, $5, $6::text)';
    expect(columnOfParameter(ins, 3)).toBe('body');
    expect(columnOfParameter(ins, 6)).toBe('body');
    expect(columnOfParameter(ins, 5)).toBe('account_sid');
    expect(columnOfParameter('SELECT $1', 1)).toBe('parameter $1');
    const un =
      'INSERT INTO t (sid, body) SELECT r.sid, r.body FROM unnest($1::text[], $2::text[]) AS r(sid, body)';
    expect(columnOfParameter(un, 2)).toBe('body');
    expect(columnOfParameter(un, 1)).toBe('sid');
  });

  it('walks arrays and JSON objects (keys and values), not Buffers or Dates', () => {
    expect(() => assertStorableParameters('SELECT $1', [['ok', 'b\u0000']])).toThrow(StoreInputError);
    expect(() => assertStorableParameters('SELECT $1', [{ a: { b: ['\uD800'] } }])).toThrow(StoreInputError);
    expect(() => assertStorableParameters('SELECT $1', [{ 'k\u0000': 1 }])).toThrow(StoreInputError);
    expect(() =>
      assertStorableParameters('SELECT $1, $2, $3', [Buffer.from([0]), new Date(), { a: 'fine' }]),
    ).not.toThrow();
  });
});
