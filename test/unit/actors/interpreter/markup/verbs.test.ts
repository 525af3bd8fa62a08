import { describe, expect, it } from 'vitest';
import {
  type Diagnostic,
  parseMarkup,
  REJECT_SIP_STATUS,
  SCHEMAS,
  type VerbNode,
} from '../../../../../src/actors/interpreter/markup/index.js';

function one(inner: string): { node: VerbNode | undefined; diagnostics: readonly Diagnostic[] } {
  const r = parseMarkup(`<Response>${inner}</Response>`);
  if (!r.ok) throw new Error(r.error.message);
  return { node: r.program[0], diagnostics: r.diagnostics };
}

function badAttr(inner: string, attribute: string): VerbNode | undefined {
  const { node, diagnostics } = one(inner);
  expect(diagnostics.map((d) => [d.reason, d.attribute, d.outcome])).toEqual([
    ['bad-attribute', attribute, 'default-used'],
  ]);
  return node;
}

describe('verb schemas', () => {
  it('every schema declares defaults of the right type', () => {
    for (const schema of SCHEMAS.values()) {
      for (const [name, spec] of Object.entries(schema.attrs)) {
        if (spec.type === 'integer' && spec.default !== null) {
          expect(spec.default, `${schema.name}.${name}`).toBeGreaterThanOrEqual(spec.min);
          expect(spec.default, `${schema.name}.${name}`).toBeLessThanOrEqual(spec.max);
        }
        if (spec.type === 'enum' && spec.default !== null) expect(spec.values).toContain(spec.default);
      }
    }
  });
});

describe('Say', () => {
  it('applies defaults', () => {
    expect(one('<Say>Hi</Say>').node).toEqual({
      verb: 'Say',
      attrs: { voice: 'man', language: 'en-US', loop: 1 },
      children: [],
      text: 'Hi',
    });
  });
  it('reads voice, language, loop', () => {
    expect(one('<Say voice="Polly.Joanna" language="fr-FR" loop="0">Salut</Say>').node?.attrs).toEqual({
      voice: 'Polly.Joanna',
      language: 'fr-FR',
      loop: 0,
    });
  });
  it('bad loop and language fall back to defaults', () => {
    expect(badAttr('<Say loop="-1">x</Say>', 'loop')?.attrs.loop).toBe(1);
    expect(badAttr('<Say language="not a tag">x</Say>', 'language')?.attrs.language).toBe('en-US');
  });
  it('flattens SSML children into the text, keeping word boundaries, without diagnostics', () => {
    const { node, diagnostics } = one(
      '<Say voice="Polly.Joanna">Hello<break time="1s"/>world, <prosody rate="slow">call <say-as interpret-as="digits">123</say-as></prosody> now</Say>',
    );
    expect(diagnostics).toEqual([]);
    expect(node?.text).toBe('Hello world, call 123 now');
    expect(node?.children).toEqual([]);
  });
  it('non-SSML elements inside Say are misplaced', () => {
    const { node, diagnostics } = one('<Say>Hi<Play>https://x.test/a.wav</Play></Say>');
    expect(node?.text).toBe('Hi');
    expect(diagnostics.map((d) => [d.reason, d.verb])).toEqual([['misplaced-verb', 'Play']]);
  });
  it('without text is skipped', () => {
    const { node, diagnostics } = one('<Say>  </Say>');
    expect(node).toBeUndefined();
    expect(diagnostics[0]).toMatchObject({ reason: 'bad-text', verb: 'Say', outcome: 'skipped' });
  });
});

describe('Play', () => {
  it('plays a URL with loop', () => {
    expect(one('<Play loop="3">https://cdn.test/a.wav</Play>').node).toEqual({
      verb: 'Play',
      attrs: { loop: 3, digits: null },
      children: [],
      text: 'https://cdn.test/a.wav',
    });
  });
  it('plays digits without a URL', () => {
    expect(one('<Play digits="wwww1234#"/>').node?.attrs.digits).toBe('wwww1234#');
  });
  it('bad digits → default, then nothing to play → skipped', () => {
    const { node, diagnostics } = one('<Play digits="12ab"/>');
    expect(node).toBeUndefined();
    expect(diagnostics.map((d) => d.reason)).toEqual(['bad-attribute', 'invalid-verb']);
  });
  it('a non-http URL is skipped', () => {
    const { node, diagnostics } = one('<Play>file:///etc/passwd</Play>');
    expect(node).toBeUndefined();
    expect(diagnostics[0]?.reason).toBe('bad-text');
  });
  it('relative URLs are kept for the interpreter to resolve', () => {
    expect(one('<Play>/audio/hello.wav</Play>').node?.text).toBe('/audio/hello.wav');
  });
});

describe('Pause', () => {
  it('defaults to 1 s and reads length', () => {
    expect(one('<Pause/>').node?.attrs).toEqual({ length: 1 });
    expect(one('<Pause length="2"/>').node?.attrs).toEqual({ length: 2 });
    expect(badAttr('<Pause length="601"/>', 'length')?.attrs.length).toBe(1);
  });
});

describe('Gather', () => {
  it('applies defaults', () => {
    expect(one('<Gather/>').node?.attrs).toEqual({
      action: null,
      method: 'POST',
      timeout: 5,
      finishOnKey: '#',
      numDigits: null,
    });
  });
  it('reads attributes and nests Say/Play/Pause in order', () => {
    const { node, diagnostics } = one(
      '<Gather action="/digits" method="get" timeout="10" finishOnKey="*" numDigits="4"><Say>Enter PIN</Say><Pause length="1"/><Play>https://x.test/b.wav</Play></Gather>',
    );
    expect(diagnostics).toEqual([]);
    expect(node?.attrs).toEqual({
      action: '/digits',
      method: 'GET',
      timeout: 10,
      finishOnKey: '*',
      numDigits: 4,
    });
    expect(node?.children.map((c) => [c.verb, c.text])).toEqual([
      ['Say', 'Enter PIN'],
      ['Pause', null],
      ['Play', 'https://x.test/b.wav'],
    ]);
    expect(node?.children[1]?.attrs).toEqual({ length: 1 });
  });
  it('an empty finishOnKey means no finish key', () => {
    expect(one('<Gather finishOnKey=""/>').node?.attrs.finishOnKey).toBe('');
  });
  it('bad values fall back to defaults', () => {
    expect(badAttr('<Gather method="PUT"/>', 'method')?.attrs.method).toBe('POST');
    expect(badAttr('<Gather timeout="0"/>', 'timeout')?.attrs.timeout).toBe(5);
    expect(badAttr('<Gather finishOnKey="ab"/>', 'finishOnKey')?.attrs.finishOnKey).toBe('#');
    expect(badAttr('<Gather numDigits="x"/>', 'numDigits')?.attrs.numDigits).toBeNull();
    expect(badAttr('<Gather action="javascript:alert(1)"/>', 'action')?.attrs.action).toBeNull();
  });
  it('nested invalid verbs are skipped, valid ones kept', () => {
    const { node, diagnostics } = one('<Gather><Record/><Say>ok</Say><Gather/></Gather>');
    expect(node?.children.map((c) => c.verb)).toEqual(['Say']);
    expect(diagnostics.map((d) => [d.reason, d.verb])).toEqual([
      ['misplaced-verb', 'Record'],
      ['misplaced-verb', 'Gather'],
    ]);
  });
});

describe('Record', () => {
  it('applies defaults', () => {
    expect(one('<Record/>').node?.attrs).toEqual({
      action: null,
      method: 'POST',
      timeout: 5,
      finishOnKey: '1234567890*#',
      maxLength: 3600,
      playBeep: true,
      trim: 'trim-silence',
      recordingStatusCallback: null,
      recordingStatusCallbackMethod: 'POST',
    });
  });
  it('reads attributes', () => {
    expect(
      one(
        '<Record action="https://a.test/r" method="GET" timeout="0" finishOnKey="#" maxLength="30" playBeep="false" recordingStatusCallback="/rs"/>',
      ).node?.attrs,
    ).toMatchObject({
      action: 'https://a.test/r',
      method: 'GET',
      timeout: 0,
      finishOnKey: '#',
      maxLength: 30,
      playBeep: false,
      recordingStatusCallback: '/rs',
    });
  });
  it('bad values fall back to defaults', () => {
    expect(badAttr('<Record playBeep="yes"/>', 'playBeep')?.attrs.playBeep).toBe(true);
    expect(badAttr('<Record maxLength="0"/>', 'maxLength')?.attrs.maxLength).toBe(3600);
  });
});

describe('Dial', () => {
  it('dials bare text with defaults', () => {
    expect(one('<Dial>+15550100</Dial>').node).toEqual({
      verb: 'Dial',
      attrs: {
        action: null,
        method: 'POST',
        timeout: 30,
        timeLimit: 14400,
        callerId: null,
        record: 'do-not-record',
        hangupOnStar: false,
      },
      children: [],
      text: '+15550100',
    });
  });
  it('reads attributes; Restcomm record="true" maps to record-from-answer', () => {
    expect(
      one(
        '<Dial action="/after" method="GET" timeout="20" timeLimit="60" callerId="+15550199" record="true">+15550100</Dial>',
      ).node?.attrs,
    ).toMatchObject({
      action: '/after',
      method: 'GET',
      timeout: 20,
      timeLimit: 60,
      callerId: '+15550199',
      record: 'record-from-answer',
    });
    expect(one('<Dial record="record-from-ringing-dual">+1555</Dial>').node?.attrs.record).toBe(
      'record-from-ringing-dual',
    );
  });
  it('bad values fall back to defaults', () => {
    expect(badAttr('<Dial timeout="1">+1555</Dial>', 'timeout')?.attrs.timeout).toBe(30);
    expect(badAttr('<Dial callerId="evil&lt;x&gt;">+1555</Dial>', 'callerId')?.attrs.callerId).toBeNull();
    expect(badAttr('<Dial record="sometimes">+1555</Dial>', 'record')?.attrs.record).toBe('do-not-record');
  });
  it('nests Number, Client, Sip, Conference with their attributes', () => {
    const { node, diagnostics } = one(
      '<Dial>' +
        '<Number sendDigits="ww123" url="/whisper">+15550100</Number>' +
        '<Client url="/c">alice</Client>' +
        '<Sip username="u" password="p" url="/s">sip:bob@example.test;transport=tcp</Sip>' +
        '</Dial>',
    );
    expect(diagnostics).toEqual([]);
    expect(node?.text).toBeNull();
    expect(node?.children).toEqual([
      {
        verb: 'Number',
        attrs: { sendDigits: 'ww123', url: '/whisper', method: 'POST' },
        children: [],
        text: '+15550100',
      },
      { verb: 'Client', attrs: { url: '/c', method: 'POST' }, children: [], text: 'alice' },
      {
        verb: 'Sip',
        attrs: { username: 'u', password: 'p', url: '/s', method: 'POST' },
        children: [],
        text: 'sip:bob@example.test;transport=tcp',
      },
    ]);
  });
  it('Conference attributes and defaults', () => {
    expect(one('<Dial><Conference>room1</Conference></Dial>').node?.children[0]).toEqual({
      verb: 'Conference',
      attrs: {
        muted: false,
        beep: 'true',
        startConferenceOnEnter: true,
        endConferenceOnEnter: false,
        waitUrl: null,
        waitMethod: 'POST',
        maxParticipants: 250,
        statusCallback: null,
        statusCallbackMethod: 'POST',
        statusCallbackEvent: null,
      },
      children: [],
      text: 'room1',
    });
    expect(
      one(
        '<Dial><Conference muted="true" beep="onEnter" startConferenceOnEnter="false" endConferenceOnEnter="true" waitUrl="/hold" maxParticipants="3" statusCallback="/cb" statusCallbackMethod="GET" statusCallbackEvent="start join mute">r</Conference></Dial>',
      ).node?.children[0]?.attrs,
    ).toEqual({
      muted: true,
      beep: 'onEnter',
      startConferenceOnEnter: false,
      endConferenceOnEnter: true,
      waitUrl: '/hold',
      waitMethod: 'POST',
      maxParticipants: 3,
      statusCallback: '/cb',
      statusCallbackMethod: 'GET',
      statusCallbackEvent: 'start join mute',
    });
  });
  it('invalid nouns are skipped; a Dial left with nothing to dial is skipped', () => {
    const { node, diagnostics } = one(
      '<Dial><Number>not-a-number</Number><Sip>http://x</Sip><Client>bad name!</Client></Dial>',
    );
    expect(node).toBeUndefined();
    expect(diagnostics.map((d) => [d.reason, d.verb])).toEqual([
      ['bad-text', 'Number'],
      ['bad-text', 'Sip'],
      ['bad-text', 'Client'],
      ['invalid-verb', 'Dial'],
    ]);
  });
  it('a Number noun or Dial text is checked by the rule the SIP routing policy dials by', () => {
    const numberText = (n: string) => one(`<Dial><Number>${n}</Number></Dial>`).node?.children[0]?.text;
    expect(numberText('+15550100001')).toBe('+15550100001');
    expect(numberText('123')).toBe('123');
    expect(numberText('011441234')).toBe('011441234');
    expect(one('<Dial>+442079460000</Dial>').node?.text).toBe('+442079460000');
    for (const bad of ['+1 (555) 010-0001', '555-0100', '+99912345678', '12w34', '#']) {
      expect(one(`<Dial><Number>${bad}</Number></Dial>`).diagnostics[0]).toMatchObject({
        reason: 'bad-text',
        verb: 'Number',
      });
    }
  });
  it('a Sip noun is checked by the rule the SIP routing policy dials by (src/numbers/address.ts)', () => {
    const sipText = (uri: string) => one(`<Dial><Sip>${uri}</Sip></Dial>`).node?.children[0]?.text;
    expect(sipText('sip:bob@example.com:5060;transport=tcp?X-Ref=1')).toBe(
      'sip:bob@example.com:5060;transport=tcp?X-Ref=1',
    );
    expect(sipText('SIPS:bob@[2001:db8::1]')).toBe('SIPS:bob@[2001:db8::1]');
    for (const bad of [
      'sip:a@b@c',
      'sip:bob@',
      'sip:bob@h:99999',
      'tel:+15550100001',
      `sip:${'a'.repeat(1020)}@h`,
    ]) {
      expect(one(`<Dial><Sip>${bad}</Sip></Dial>`).diagnostics.map((d) => [d.reason, d.verb])[0]).toEqual([
        'bad-text',
        'Sip',
      ]);
    }
  });
  it('a Conference mixed with other nouns makes the Dial invalid (skipped)', () => {
    const { node, diagnostics } = one('<Dial><Conference>r</Conference><Number>+1555</Number></Dial>');
    expect(node).toBeUndefined();
    expect(diagnostics.map((d) => [d.reason, d.verb])).toEqual([['invalid-verb', 'Dial']]);
    expect(one('<Dial><Conference>a</Conference><Conference>b</Conference></Dial>').node).toBeUndefined();
  });
  it('a Say inside Dial is misplaced', () => {
    const { node, diagnostics } = one('<Dial><Say>x</Say><Number>+1555</Number></Dial>');
    expect(node?.children.map((c) => c.verb)).toEqual(['Number']);
    expect(diagnostics[0]).toMatchObject({ reason: 'misplaced-verb', verb: 'Say' });
  });
});

describe('Hangup, Redirect, Reject', () => {
  it('Hangup has no attributes', () => {
    expect(one('<Hangup/>').node).toEqual({ verb: 'Hangup', attrs: {}, children: [], text: null });
  });
  it('Redirect needs a URL; method defaults to POST', () => {
    expect(one('<Redirect method="GET">/next</Redirect>').node).toEqual({
      verb: 'Redirect',
      attrs: { method: 'GET' },
      children: [],
      text: '/next',
    });
    expect(one('<Redirect>/n</Redirect>').node?.attrs.method).toBe('POST');
    const { node, diagnostics } = one('<Redirect/>');
    expect(node).toBeUndefined();
    expect(diagnostics[0]?.reason).toBe('bad-text');
  });
  it('Reject reason rejected (603) or busy (486)', () => {
    expect(one('<Reject/>').node?.attrs.reason).toBe('rejected');
    expect(one('<Reject reason="busy"/>').node?.attrs.reason).toBe('busy');
    expect(badAttr('<Reject reason="nope"/>', 'reason')?.attrs.reason).toBe('rejected');
    expect(REJECT_SIP_STATUS).toEqual({ rejected: 603, busy: 486 });
  });
});

describe('Sms and Email', () => {
  it('Sms reads to, from, action, method, statusCallback', () => {
    expect(
      one(
        '<Sms to="+15550100" from="+15550199" action="/a" method="GET" statusCallback="https://s.test/cb">Hello</Sms>',
      ).node,
    ).toEqual({
      verb: 'Sms',
      attrs: {
        to: '+15550100',
        from: '+15550199',
        action: '/a',
        method: 'GET',
        statusCallback: 'https://s.test/cb',
      },
      children: [],
      text: 'Hello',
    });
    expect(one('<Sms>hi</Sms>').node?.attrs).toEqual({
      to: null,
      from: null,
      action: null,
      method: 'POST',
      statusCallback: null,
    });
  });
  it('Email reads its attributes; type defaults to text/plain; no valid `to` → skipped', () => {
    expect(
      one(
        '<Email to="a@b.test, c@d.test" from="s@x.test" subject="Hi" cc="e@f.test" bcc="g@h.test" type="text/html">Body</Email>',
      ).node?.attrs,
    ).toEqual({
      to: 'a@b.test, c@d.test',
      from: 's@x.test',
      subject: 'Hi',
      cc: 'e@f.test',
      bcc: 'g@h.test',
      type: 'text/html',
    });
    expect(one('<Email to="a@b.test">x</Email>').node?.attrs.type).toBe('text/plain');
    const { node, diagnostics } = one('<Email to="not-an-address">x</Email>');
    expect(node).toBeUndefined();
    expect(diagnostics.map((d) => d.reason)).toEqual(['bad-attribute', 'invalid-verb']);
  });
});
