/**
 * The demo's IVR documents are valid markup (no diagnostics) with the verbs the demo promises, and
 * the try-it block's shell quoting survives a shell: what is printed is what runs.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseMarkup } from '../../../src/actors/interpreter/markup/parser.js';
import { GREETING_WAV, ivrMarkup } from '../../../src/cli/demo/ivr.js';
import { renderCurl, shellQuote } from '../../../src/cli/demo/try-it.js';
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
