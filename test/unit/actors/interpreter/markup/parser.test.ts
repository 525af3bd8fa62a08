import { describe, expect, it } from 'vitest';
import {
  MarkupErrorCode,
  type ParseResult,
  parseMarkup,
  type VerbNode,
} from '../../../../../src/actors/interpreter/markup/index.js';

function program(
  xml: string,
  mode: 'voice' | 'sms' = 'voice',
): { program: readonly VerbNode[]; diagnostics: ParseResult['diagnostics'] } {
  const r = parseMarkup(xml, { mode });
  if (!r.ok) throw new Error(`unexpected parse failure: ${r.error.message}`);
  return r;
}

describe('parseMarkup: document level', () => {
  it('parses a simple program into plain JSON', () => {
    const r = program(
      '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Say>Hello &amp; welcome</Say><Hangup/></Response>',
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.program).toEqual([
      {
        verb: 'Say',
        attrs: { voice: 'man', language: 'en-US', loop: 1 },
        children: [],
        text: 'Hello & welcome',
      },
      { verb: 'Hangup', attrs: {}, children: [], text: null },
    ]);
    expect(JSON.parse(JSON.stringify(r.program))).toEqual(r.program);
  });

  it('an empty <Response/> is a valid empty program', () => {
    expect(program('<Response/>').program).toEqual([]);
  });

  it.each([
    ['', 'empty'],
    ['   \n\t', 'empty'],
    ['<Response><Say>unclosed</Response>', 'malformed'],
    ['not xml at all', 'malformed'],
    ['<Response><Say>a</Say></Response><Response/>', 'malformed'],
    ['<Document><Say>x</Say></Document>', 'wrong-root'],
    ['<response><Say>x</Say></response>', 'wrong-root'],
  ])('rejects %j as %s with 12100', (xml, reason) => {
    const r = parseMarkup(xml);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe(MarkupErrorCode.ParseFailure);
    expect(r.error.reason).toBe(reason);
    expect(r.error.outcome).toBe('document-rejected');
  });

  it('refuses "billion laughs" without expanding anything', () => {
    const lol = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<Response><Say>&lol9;</Say></Response>`;
    const started = Date.now();
    const r = parseMarkup(lol);
    expect(Date.now() - started).toBeLessThan(500);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.reason).toBe('doctype');
  });

  it('refuses an external entity payload (never fetched, never read)', () => {
    const xxe = `<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd"><!ENTITY web SYSTEM "http://127.0.0.1:1/x">]>
<Response><Say>&xxe;&web;</Say></Response>`;
    const r = parseMarkup(xxe);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.reason).toBe('doctype');
      expect(JSON.stringify(r)).not.toContain('root:');
    }
  });

  it('NUL, other control characters and unpaired surrogates are parse failures (12100)', () => {
    for (const bad of ['a\u0000b', 'a\u0001b', 'a\ufffeb', 'a\ud800b', 'a\udc00b', 'a&#0;b', 'a&#xD800;b']) {
      const r = parseMarkup(`<Response><Say>${bad}</Say></Response>`);
      expect(r.ok, JSON.stringify(bad)).toBe(false);
      if (!r.ok) expect(r.error.code).toBe(12100);
    }
    expect(parseMarkup('<Response><Say>😀</Say></Response>').ok).toBe(true);
  });

  it('an undeclared entity reference is a parse failure, not an expansion', () => {
    const r = parseMarkup('<Response><Say>&xxe;</Say></Response>');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.reason).toBe('malformed');
  });

  it('expands only the five predefined entities and character references', () => {
    const r = program('<Response><Say>&lt;&gt;&amp;&quot;&apos;&#65;&#x42;</Say></Response>');
    expect(r.program[0]?.text).toBe('<>&"\'AB');
  });

  it('enforces the byte cap (default 1 MiB, configurable) with 11750', () => {
    const big = `<Response><Say>${'a'.repeat(1024 * 1024)}</Say></Response>`;
    const r = parseMarkup(big);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe(MarkupErrorCode.TooLarge);
      expect(r.error.reason).toBe('too-large');
    }
    const small = '<Response><Say>hello</Say></Response>';
    expect(parseMarkup(small, { maxBytes: 10 }).ok).toBe(false);
    expect(parseMarkup(small, { maxBytes: 100 }).ok).toBe(true);
    // Bytes, not characters: multi-byte text counts by its UTF-8 size.
    const utf8 = `<Response><Say>${'é'.repeat(40)}</Say></Response>`;
    expect(parseMarkup(utf8, { maxBytes: 90 }).ok).toBe(false);
  });

  it('caps nesting depth and element count', () => {
    const deep = `<Response>${'<Gather>'.repeat(40)}${'</Gather>'.repeat(40)}</Response>`;
    const r = parseMarkup(deep);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.reason).toBe('too-deep');
    const many = `<Response>${'<Pause/>'.repeat(50)}</Response>`;
    const r2 = parseMarkup(many, { maxElements: 20 });
    expect(r2.ok).toBe(false);
    if (!r2.ok) expect(r2.error.reason).toBe('too-many-elements');
  });

  it('accepts a Buffer', () => {
    const r = parseMarkup(Buffer.from('<Response><Say>héllo</Say></Response>', 'utf8'));
    expect(r.ok && r.program[0]?.text).toBe('héllo');
  });

  it('ignores comments, processing instructions and whitespace; CDATA is text', () => {
    const r = program('<Response>\n  <!-- c --><?pi x?>\n  <Say><![CDATA[a < b]]></Say>\n</Response>');
    expect(r.program).toHaveLength(1);
    expect(r.program[0]?.text).toBe('a < b');
    expect(r.diagnostics).toEqual([]);
  });

  it('stray text under <Response> is a warning, not an error', () => {
    const r = program('<Response>hello<Hangup/></Response>');
    expect(r.program.map((v) => v.verb)).toEqual(['Hangup']);
    expect(r.diagnostics.map((d) => [d.reason, d.outcome])).toEqual([['stray-text', 'ignored']]);
  });
});

describe('parseMarkup: diagnostics with defined outcomes', () => {
  it('skips an unknown verb with a 12200 warning and keeps the rest', () => {
    const r = program('<Response><Say>a</Say><Dance speed="fast"/><Hangup/></Response>');
    expect(r.program.map((v) => v.verb)).toEqual(['Say', 'Hangup']);
    expect(r.diagnostics).toEqual([
      {
        code: 12200,
        level: 'warning',
        reason: 'unknown-verb',
        message: 'unknown verb <Dance> skipped',
        verb: 'Dance',
        attribute: null,
        line: 1,
        outcome: 'skipped',
      },
    ]);
  });

  it('uses the default for a bad attribute value and says so', () => {
    const r = program('<Response><Pause length="forever"/></Response>');
    expect(r.program[0]?.attrs.length).toBe(1);
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({
      code: 12200,
      reason: 'bad-attribute',
      verb: 'Pause',
      attribute: 'length',
      outcome: 'default-used',
    });
  });

  it('ignores an unknown attribute with a warning', () => {
    const r = program('<Response><Hangup color="red"/></Response>');
    expect(r.program).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({
      reason: 'unknown-attribute',
      attribute: 'color',
      outcome: 'ignored',
    });
  });

  it('skips verbs in the wrong place (noun at top level, Dial inside Gather)', () => {
    const r = program(
      '<Response><Number>+15550100</Number><Gather><Dial>+15550100</Dial><Say>x</Say></Gather></Response>',
    );
    expect(r.program).toHaveLength(1);
    expect(r.program[0]?.children.map((c) => c.verb)).toEqual(['Say']);
    expect(r.diagnostics.map((d) => [d.reason, d.verb])).toEqual([
      ['misplaced-verb', 'Number'],
      ['misplaced-verb', 'Dial'],
    ]);
  });

  it('reports line numbers', () => {
    const r = program('<Response>\n<Say>a</Say>\n<Pause length="x"/>\n</Response>');
    expect(r.diagnostics[0]?.line).toBe(3);
  });
});

describe('parseMarkup: SMS mode', () => {
  it('accepts Sms, Redirect and Email only', () => {
    const r = program(
      '<Response><Sms to="+15550100">hi</Sms><Say>no</Say><Email to="a@b.test">body</Email><Redirect>/next</Redirect><Dial>+1555</Dial></Response>',
      'sms',
    );
    expect(r.program.map((v) => v.verb)).toEqual(['Sms', 'Email', 'Redirect']);
    expect(r.diagnostics.map((d) => [d.reason, d.verb, d.message])).toEqual([
      ['misplaced-verb', 'Say', '<Say> is not allowed in SMS markup; skipped'],
      ['misplaced-verb', 'Dial', '<Dial> is not allowed in SMS markup; skipped'],
    ]);
  });
});
