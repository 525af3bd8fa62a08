import { describe, expect, it } from 'vitest';
import {
  readUssdMarkup,
  USSD_MAX_LENGTH_EN,
  USSD_MAX_LENGTH_OTHER,
  USSD_TOO_LONG_TEXT,
} from '../../../../src/actors/ussd/ussd-markup.js';

const reply = (body: string) => {
  const r = readUssdMarkup(body);
  if (!r.ok) throw new Error(r.error.message);
  return r;
};

describe('USSD markup', () => {
  it('joins UssdMessage texts, then a UssdCollect menu, with newlines', () => {
    const r = reply(
      '<Response><UssdMessage>Hello</UssdMessage><UssdCollect action="/next" method="GET"><UssdMessage>1 Yes</UssdMessage><UssdMessage>2 No</UssdMessage></UssdCollect></Response>',
    );
    expect(r.reply).toEqual({
      language: 'en',
      text: 'Hello\n1 Yes\n2 No',
      collect: { action: '/next', method: 'GET' },
      tooLong: null,
    });
  });

  it('a body that is not XML is one message', () => {
    expect(reply('  Balance: 5 EUR  ').reply).toMatchObject({ text: 'Balance: 5 EUR', collect: null });
  });

  it('replaces a message over 182 characters (en) or 80 (other languages) by the error text', () => {
    const en = reply(`<Response><UssdMessage>${'a'.repeat(USSD_MAX_LENGTH_EN)}</UssdMessage></Response>`);
    expect(en.reply.tooLong).toBeNull();
    const long = reply(
      `<Response><UssdMessage>${'a'.repeat(USSD_MAX_LENGTH_EN + 1)}</UssdMessage></Response>`,
    );
    expect(long.reply).toMatchObject({
      text: USSD_TOO_LONG_TEXT,
      collect: null,
      tooLong: { length: 183, max: 182 },
    });
    const fr = reply(
      `<Response><Language>fr</Language><UssdCollect action="/x"><UssdMessage>${'é'.repeat(USSD_MAX_LENGTH_OTHER + 1)}</UssdMessage></UssdCollect></Response>`,
    );
    expect(fr.reply).toMatchObject({
      language: 'fr',
      text: USSD_TOO_LONG_TEXT,
      collect: null,
      tooLong: { max: 80 },
    });
  });

  it('voice verbs are not USSD markup: skipped with a diagnostic; a malformed document fails', () => {
    const r = reply('<Response><Say>hi</Say><UssdMessage>ok</UssdMessage></Response>');
    expect(r.reply.text).toBe('ok');
    expect(r.diagnostics.map((d) => d.reason)).toEqual(['misplaced-verb']);
    expect(readUssdMarkup('<Response><UssdMessage>').ok).toBe(false);
  });
});
