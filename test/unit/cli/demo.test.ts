/**
 * The demo's IVR documents are valid markup (no diagnostics) with the verbs the demo promises, and
 * the try-it block's shell quoting survives a shell: what is printed is what runs.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseMarkup } from '../../../src/actors/interpreter/markup/parser.js';
import { GREETING_WAV, ivrMarkup } from '../../../src/cli/demo/ivr.js';
import { renderCurl, shellQuote, tryItBlock } from '../../../src/cli/demo/try-it.js';
import { readEngineWav } from '../../../src/media/engine/wav.js';

const verbs = (xml: string): string[] => {
  const r = parseMarkup(xml);
  if (!r.ok) throw new Error(r.error.message);
  expect(r.diagnostics).toEqual([]);
  return r.program.map((n) => n.verb);
};

describe('demo IVR markup', () => {
  it('greets inside a one-key Gather, by TTS or by the bundled recording', () => {
    expect(verbs(ivrMarkup.hello(true))).toEqual(['Gather', 'Say', 'Hangup']);
    expect(ivrMarkup.hello(true)).toContain('<Say>Welcome');
    expect(ivrMarkup.hello(false)).toContain('<Play>greeting.wav</Play>');
    expect(verbs(ivrMarkup.hello(false))).toEqual(['Gather', 'Say', 'Hangup']);
  });

  it('says the key back, records a message, and hangs up', () => {
    expect(verbs(ivrMarkup.gathered('7'))).toEqual(['Say', 'Say', 'Record', 'Say', 'Hangup']);
    expect(ivrMarkup.gathered('7')).toContain('You pressed 7.');
    expect(ivrMarkup.gathered('<&>')).not.toContain('<&>');
    expect(verbs(ivrMarkup.recorded())).toEqual(['Say', 'Hangup']);
  });

  it('ships a small greeting the media engine plays without conversion', () => {
    expect(statSync(GREETING_WAV).size).toBeLessThan(200_000);
    const wav = readEngineWav(readFileSync(GREETING_WAV));
    expect(wav.ok && wav.pcm.length / 8000).toBeGreaterThan(2);
  });
});

describe('try-it shell rendering', () => {
  it('quotes words so that bash hands them back unchanged', () => {
    const words = ['From=+15550100001', "Body=it's fine & $HOME", 'AC1:tok', 'a b', ''];
    const echoed = spawnSync('bash', ['-c', `printf '%s\\n' ${words.map(shellQuote).join(' ')}`], {
      encoding: 'utf8',
    });
    expect(echoed.stdout.split('\n').slice(0, -1)).toEqual(words);
  });

  it('breaks long commands with continuations that a shell joins back', () => {
    const args = ['-u', 'AC1:tok', `http://127.0.0.1:8080/${'x'.repeat(90)}`, '--data-urlencode', 'To=+1555'];
    const text = renderCurl(args);
    expect(text.split('\n').length).toBeGreaterThan(1);
    const echoed = spawnSync('bash', ['-c', text.replace(/^curl/, "printf '%s\\n'")], { encoding: 'utf8' });
    expect(echoed.stdout.split('\n').slice(0, -1)).toEqual(args);
  });
});

describe('try-it block', () => {
  const input = {
    base: 'http://127.0.0.1:8080',
    accountSid: `AC${'1'.repeat(32)}`,
    authToken: 'f'.repeat(32),
    number: '+15550100001',
    client: { login: 'alice', password: 'alice-password' },
    smsTo: '+15551234567',
  };

  it('calls a wildcard SIP listener on loopback from another loopback address', () => {
    const text = tryItBlock({ ...input, sip: '0.0.0.0:5080' });
    expect(text).toContain('sipp -sn uac -s +15550100001 -i 127.0.0.2 -m 1 -d 8000 127.0.0.1:5080');
    expect(text).toContain('<sip:alice@127.0.0.1:5080;transport=udp>;auth_pass=alice-password');
  });

  it('sends every value holding a + with --data-urlencode, never -d', () => {
    const text = tryItBlock({ ...input, sip: '127.0.0.1:5080' });
    const rest = text.slice(text.indexOf('REST'));
    expect(rest).toContain('curl ');
    expect(rest).not.toMatch(/(^|\s)(-d|--data)\s/m);
    expect(text).toContain('--data-urlencode From=+15550100001');
  });
});
