import { createHmac } from 'node:crypto';
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import {
  encodeForm,
  type Params,
  switchboardSignature,
  twilioBodySignature,
  twilioSignature,
  twilioSigningString,
  verifySwitchboardSignature,
  verifyTwilioBodySignature,
  verifyTwilioSignature,
} from '../../../src/webhooks/signing.js';
import { prng } from '../../support/fuzz/prng.js';

const VECTOR_URL = 'https://mycompany.com/myapp.php?foo=1&bar=2';
const VECTOR_PARAMS: Params = [
  ['CallSid', 'CA1234567890ABCDE'],
  ['Caller', '+12349013030'],
  ['Digits', '1234'],
  ['From', '+12349013030'],
  ['To', '+18005551212'],
];

/** Deterministic, so a failure reproduces. */
const rng = prng;

const ALPHABET = ['a', 'b', 'Z', '0', '9', ' ', '+', '-', '_', '.', 'é', 'ß', '漢', '😀', '&', '=', '%', '/'];

function randomString(r: () => number, max: number, alphabet = ALPHABET): string {
  const n = 1 + Math.floor(r() * max);
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(r() * alphabet.length)];
  return s;
}

function toRecord(params: Params): Record<string, string | string[]> {
  const rec: Record<string, string | string[]> = {};
  for (const [k, v] of params) {
    const cur = rec[k];
    if (cur === undefined) rec[k] = v;
    else if (Array.isArray(cur)) cur.push(v);
    else rec[k] = [cur, v];
  }
  return rec;
}

function randomCase(r: () => number) {
  const hosts = ['example.com', 'hooks.example.org', 'app.test'];
  const path = encodeURI(randomString(r, 8, ['a', 'b', 'c', '1', '-', '_', 'é', ' ']));
  const query =
    r() < 0.5 ? '' : `?${encodeForm([[randomString(r, 4, ['q', 'x', 'y']), randomString(r, 6)]])}`;
  const url = `${r() < 0.5 ? 'https' : 'http'}://${hosts[Math.floor(r() * hosts.length)]}/${path}${query}`;
  const names = ['CallSid', 'From', 'To', 'Digits', 'Body', 'x y', 'Name+1', 'Ünï'];
  const params: Array<[string, string]> = [];
  const count = Math.floor(r() * 8);
  for (let i = 0; i < count; i++) {
    const name = names[Math.floor(r() * names.length)]!;
    params.push([name, randomString(r, 12)]);
  }
  const token = randomString(r, 32, ['a', 'b', 'c', 'd', 'e', 'f', '0', '1', '2', '3']);
  return { url, params, token };
}

describe('X-Twilio-Signature', () => {
  it('reproduces the published test vector byte for byte', () => {
    expect(twilioSignature('12345', VECTOR_URL, VECTOR_PARAMS)).toBe('0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
  });

  it('does not depend on parameter order', () => {
    const reversed = [...VECTOR_PARAMS].reverse();
    expect(twilioSignature('12345', VECTOR_URL, reversed)).toBe('0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
  });

  it('is accepted by the twilio package validator for the vector', () => {
    const sig = twilioSignature('12345', VECTOR_URL, VECTOR_PARAMS);
    expect(twilio.validateRequest('12345', sig, VECTOR_URL, toRecord(VECTOR_PARAMS))).toBe(true);
  });

  it('is accepted by twilio.validateRequest over 1,000 random URLs and parameter sets, and one-byte changes are rejected', () => {
    const r = rng(20261122);
    let accepted = 0;
    let rejected = 0;
    for (let i = 0; i < 1000; i++) {
      const { url, params, token } = randomCase(r);
      const sig = twilioSignature(token, url, params);
      expect(twilio.validateRequest(token, sig, url, toRecord(params)), url).toBe(true);
      expect(verifyTwilioSignature(url, params, token, sig)).toBe(true);
      accepted++;
      // One-byte change to the URL path (keeps it a valid URL).
      const slash = url.indexOf('/', url.indexOf('//') + 2);
      const changedUrl = `${url.slice(0, slash + 1)}X${url.slice(slash + 1)}`;
      expect(twilio.validateRequest(token, sig, changedUrl, toRecord(params))).toBe(false);
      // One-byte change to the token.
      const changedToken = (token[0] === 'a' ? 'b' : 'a') + token.slice(1);
      expect(twilio.validateRequest(changedToken, sig, url, toRecord(params))).toBe(false);
      expect(verifyTwilioSignature(url, params, changedToken, sig)).toBe(false);
      // One-byte change to a parameter value (or an added parameter when there are none).
      const first = params[0];
      const changedParams: Params = first
        ? [[first[0], first[1] + '!'], ...params.slice(1)]
        : [['Extra', '1']];
      expect(twilio.validateRequest(token, sig, url, toRecord(changedParams))).toBe(false);
      expect(verifyTwilioSignature(url, changedParams, token, sig)).toBe(false);
      rejected += 3;
    }
    expect(accepted).toBe(1000);
    expect(rejected).toBe(3000);
  });

  it('counts a value repeated under one name once, as twilio-node does', () => {
    const params: Params = [
      ['Tag', 'a'],
      ['From', '+1 555'],
      ['Tag', 'a'],
    ];
    const sig = twilioSignature('tok', 'https://x.test/h', params);
    expect(twilioSigningString('https://x.test/h', params)).toBe('https://x.test/hFrom+1 555Taga');
    expect(twilio.validateRequest('tok', sig, 'https://x.test/h', { Tag: ['a', 'a'], From: '+1 555' })).toBe(
      true,
    );
  });

  it('covers repeated parameter names', () => {
    const params: Params = [
      ['Tag', 'b'],
      ['Tag', 'a'],
      ['From', '+1 555'],
    ];
    const sig = twilioSignature('tok', 'https://x.test/h', params);
    expect(twilio.validateRequest('tok', sig, 'https://x.test/h', { Tag: ['b', 'a'], From: '+1 555' })).toBe(
      true,
    );
    expect(twilio.validateRequest('tok', sig, 'https://x.test/h', { Tag: ['b'], From: '+1 555' })).toBe(
      false,
    );
  });

  it('rejects a missing or empty signature', () => {
    expect(verifyTwilioSignature(VECTOR_URL, VECTOR_PARAMS, '12345', undefined)).toBe(false);
    expect(verifyTwilioSignature(VECTOR_URL, VECTOR_PARAMS, '12345', '')).toBe(false);
    expect(verifyTwilioSignature(VECTOR_URL, VECTOR_PARAMS, '12345', 'short')).toBe(false);
  });

  it('for GET signs the full URL with the parameters in the query', () => {
    const url = `https://x.test/h?${encodeForm(VECTOR_PARAMS)}`;
    const sig = twilioSignature('12345', url, []);
    expect(twilio.validateRequest('12345', sig, url, {})).toBe(true);
  });
});

describe('encodeForm', () => {
  const reference = (params: Params) => {
    const usp = new URLSearchParams();
    for (const [name, value] of params) usp.append(name, value);
    return usp.toString();
  };
  // Every character class the serialiser treats apart: kept, `+` for space, escaped by it but not
  // by encodeURIComponent, multi-byte, astral, and lone surrogates (written as U+FFFD).
  const chars = ['a', 'Z', '0', '*', '-', '.', '_', ' ', '!', "'", '(', ')', '~', '+', '&', '=', '%', '/'];
  const alphabet = [...chars, 'é', '漢', '😀', '\ud800', '\udc00', '\n', '\u0000'];

  it('gives the bytes URLSearchParams gives, over 2,000 random parameter lists', () => {
    const r = rng(20261126);
    for (let i = 0; i < 2000; i++) {
      const params: Array<[string, string]> = [];
      const count = Math.floor(r() * 5);
      for (let j = 0; j < count; j++)
        params.push([randomString(r, 6, alphabet), r() < 0.2 ? '' : randomString(r, 10, alphabet)]);
      expect(encodeForm(params)).toBe(reference(params));
    }
  });

  it('writes nothing for no parameters and keeps the order given', () => {
    expect(encodeForm([])).toBe('');
    expect(
      encodeForm([
        ['b', '1 2'],
        ['a', "it's (~ok)!"],
        ['b', ''],
      ]),
    ).toBe('b=1+2&a=it%27s+%28%7Eok%29%21&b=');
  });
});

describe('JSON-body variant (bodySHA256)', () => {
  const body = JSON.stringify({ CallSid: 'CA1', Body: 'héllo +1 & more' });
  it('our signature is accepted by twilio.validateRequestWithBody', () => {
    const { url, signature } = twilioBodySignature('tok', 'https://x.test/cb?a=1', body);
    expect(url).toMatch(/^https:\/\/x\.test\/cb\?a=1&bodySHA256=[0-9a-f]{64}$/);
    expect(twilio.validateRequestWithBody('tok', signature, url, body)).toBe(true);
    expect(twilio.validateRequestWithBody('tok', signature, url, body + ' ')).toBe(false);
  });
  it('we verify what twilio-node computes, and reject a changed body or token', () => {
    const hash = twilio.getExpectedBodyHash(body);
    const url = `https://x.test/cb?bodySHA256=${hash}`;
    const sig = twilio.getExpectedTwilioSignature('tok', url, {});
    expect(verifyTwilioBodySignature(url, body, 'tok', sig)).toBe(true);
    expect(verifyTwilioBodySignature(url, `${body}x`, 'tok', sig)).toBe(false);
    expect(verifyTwilioBodySignature(url, body, 'tok2', sig)).toBe(false);
    expect(verifyTwilioBodySignature('https://x.test/cb', body, 'tok', sig)).toBe(false);
  });
});

describe('X-Switchboard-Signature', () => {
  it('is t=<unix>,v1=<hex HMAC-SHA256(token, t.bytes)>', () => {
    const body = Buffer.from('CallSid=CA1&Body=h%C3%A9llo', 'utf8');
    const header = switchboardSignature('secret', 1700000000, body);
    const expected = createHmac('sha256', 'secret').update('1700000000.').update(body).digest('hex');
    expect(header).toBe(`t=1700000000,v1=${expected}`);
    expect(verifySwitchboardSignature(header, body, 'secret', { nowSec: 1700000010 })).toBe(true);
  });

  it('rejects changed bytes, a wrong token, a stale timestamp and garbage', () => {
    const body = Buffer.from('a=1');
    const header = switchboardSignature('secret', 1700000000, body);
    expect(verifySwitchboardSignature(header, Buffer.from('a=2'), 'secret', { nowSec: 1700000000 })).toBe(
      false,
    );
    expect(verifySwitchboardSignature(header, body, 'secreT', { nowSec: 1700000000 })).toBe(false);
    expect(verifySwitchboardSignature(header, body, 'secret', { nowSec: 1700009999 })).toBe(false);
    expect(verifySwitchboardSignature('t=abc,v1=00', body, 'secret')).toBe(false);
    expect(verifySwitchboardSignature(undefined, body, 'secret')).toBe(false);
  });
});
