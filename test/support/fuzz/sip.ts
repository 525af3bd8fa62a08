/**
 * Malformed SIP for fuzz tests: deterministic per seed (a seeded PRNG; print the seed on failure
 * and pass it back to replay), built from well-formed INVITE, REGISTER, MESSAGE and BYE messages
 * by one mutation each: random bytes, truncation, huge headers, control characters, bad
 * Content-Length, bad SDP, odd encodings, lost or doubled headers, flipped bytes.
 */
import { prng } from './prng.js';

export interface FuzzCase {
  readonly name: string;
  /** Exactly the bytes to send. */
  readonly bytes: Buffer;
  /** The Call-ID the base message carried (answers to it are this case's). */
  readonly callId: string;
}

export interface SipFuzzTarget {
  /** The service's SIP port. */
  readonly port: number;
  /** A hosted number whose markup ends calls at once (so INVITEs that pass end cleanly). */
  readonly number: string;
  /** Via sent-by of the fuzzing peer. */
  readonly via: string;
}

const SDP = [
  'v=0',
  'o=- 1 1 IN IP4 127.0.0.2',
  's=-',
  'c=IN IP4 127.0.0.2',
  't=0 0',
  'm=audio 40000 RTP/AVP 0 101',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:101 telephone-event/8000',
  '',
].join('\r\n');

const METHODS = ['INVITE', 'REGISTER', 'MESSAGE', 'BYE'] as const;

function base(method: (typeof METHODS)[number], t: SipFuzzTarget, id: string, body: string): string[] {
  const ruri = method === 'REGISTER' ? `sip:127.0.0.1:${t.port}` : `sip:${t.number}@127.0.0.1:${t.port}`;
  const to = method === 'REGISTER' ? '<sip:fuzzer@127.0.0.1>' : `<sip:${t.number}@127.0.0.1>`;
  const type = method === 'MESSAGE' ? 'text/plain' : 'application/sdp';
  return [
    `${method} ${ruri} SIP/2.0`,
    `Via: SIP/2.0/${t.via};branch=z9hG4bK-${id}`,
    `From: "Fuzzer" <sip:fuzzer@carrier.invalid>;tag=${id}`,
    `To: ${method === 'BYE' ? `${to};tag=nosuchdialog` : to}`,
    `Call-ID: ${id}@carrier.invalid`,
    `CSeq: 1 ${method}`,
    'Max-Forwards: 70',
    'Contact: <sip:fuzzer@127.0.0.2:5999>',
    'User-Agent: switchboard-fuzz',
    ...(body ? [`Content-Type: ${type}`] : []),
    `Content-Length: ${Buffer.byteLength(body, 'latin1')}`,
    '',
    body,
  ];
}

const CONTROL = [0x00, 0x01, 0x07, 0x08, 0x0b, 0x0c, 0x0d, 0x0a, 0x1b, 0x7f];
const ODD = [
  '\u00ff\u00fe', // UTF-16 BOM bytes
  '\u00ef\u00bb\u00bf', // UTF-8 BOM bytes
  '\u00c0\u00af', // overlong UTF-8 "/"
  '\u00ed\u00a0\u0080', // UTF-8 encoded lone surrogate
  '\u00e2\u0082\u00ac', // "€" in UTF-8
  '\u00f0\u009f\u0098\u0080', // emoji in UTF-8
  '%00',
  '%ZZ',
  '\u0080\u0081\u0082',
];

type Mutation = (lines: string[], r: () => number, pick: <T>(a: readonly T[]) => T) => string;

const join = (lines: string[]) => lines.join('\r\n');
const headerIndex = (lines: string[], r: () => number) => 1 + Math.floor(r() * (lines.indexOf('') - 1));

const MUTATIONS: Readonly<Record<string, Mutation>> = {
  randomBytes: (_l, r) => {
    const n = 1 + Math.floor(r() * 1400);
    return Array.from({ length: n }, () => String.fromCharCode(Math.floor(r() * 256))).join('');
  },
  truncate: (l, r) => {
    const text = join(l);
    return text.slice(0, Math.floor(r() * text.length));
  },
  hugeHeader: (l, r, pick) => {
    const i = headerIndex(l, r);
    const size = pick([300, 1_000, 9_000, 40_000]);
    l[i] = `${l[i]}${'x'.repeat(size)}`;
    return join(l);
  },
  manyHeaders: (l, r) => {
    const n = 50 + Math.floor(r() * 2_000);
    l.splice(1, 0, ...Array.from({ length: n }, (_, k) => `X-Fuzz-${k}: ${k}`));
    return join(l);
  },
  controlChar: (l, r, pick) => {
    const i = r() < 0.15 ? 0 : headerIndex(l, r);
    const line = l[i] as string;
    const at = Math.floor(r() * line.length);
    l[i] = `${line.slice(0, at)}${String.fromCharCode(pick(CONTROL))}${line.slice(at)}`;
    return join(l);
  },
  badContentLength: (l, _r, pick) => {
    const i = l.findIndex((x) => x.startsWith('Content-Length:'));
    l[i] =
      `Content-Length: ${pick(['-1', '99999999', 'abc', '1e3', '0x10', '', ' 12 34', '4294967296', '5'])}`;
    return join(l);
  },
  badSdp: (l, r, pick) => {
    const bodies = [
      'v=0\r\nm=audio notaport RTP/AVP 0\r\n',
      'garbage',
      `${SDP}m=audio 1 RTP/AVP ${'9'.repeat(2_000)}\r\n`,
      'v=0\r\nc=IN IP4 169.254.169.254\r\nm=audio 4000 RTP/AVP 0\r\n',
      'v=0\r\nm=video 4000 RTP/AVP 96\r\n',
      SDP.replace('RTP/AVP 0 101', `RTP/AVP ${Array.from({ length: 300 }, (_, k) => k % 128).join(' ')}`),
      SDP.slice(0, Math.floor(r() * SDP.length)),
    ];
    const body = pick(bodies);
    const end = l.indexOf('');
    const head = l.slice(0, end).filter((x) => !/^Content-(Type|Length):/.test(x));
    return join([...head, 'Content-Type: application/sdp', `Content-Length: ${body.length}`, '', body]);
  },
  oddEncoding: (l, r, pick) => {
    const i = headerIndex(l, r);
    l[i] = `${l[i]}${pick(ODD)}`;
    if (r() < 0.3) l[0] = (l[0] as string).replace('sip:', `sip:${pick(ODD)}`);
    return join(l);
  },
  dropHeader: (l, r) => {
    l.splice(headerIndex(l, r), 1);
    return join(l);
  },
  doubleHeader: (l, r) => {
    const i = headerIndex(l, r);
    l.splice(i, 0, l[i] as string);
    return join(l);
  },
  flipBytes: (l, r) => {
    const chars = join(l).split('');
    const n = 1 + Math.floor(r() * 8);
    for (let k = 0; k < n; k++)
      chars[Math.floor(r() * chars.length)] = String.fromCharCode(Math.floor(r() * 256));
    return chars.join('');
  },
  bareLf: (l) => l.join('\n'),
};

export const MUTATION_NAMES = Object.keys(MUTATIONS);

/** `count` malformed messages for the seed, cycling through every mutation. */
export function sipFuzzCases(seed: number, count: number, target: SipFuzzTarget): FuzzCase[] {
  const r = prng(seed);
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)] as T;
  const out: FuzzCase[] = [];
  for (let i = 0; i < count; i++) {
    const mutation = MUTATION_NAMES[i % MUTATION_NAMES.length] as string;
    const method = pick(METHODS);
    const id = `fuzz-${seed}-${i}`;
    const body = method === 'INVITE' ? SDP : method === 'MESSAGE' ? 'hello from the fuzzer' : '';
    const text = (MUTATIONS[mutation] as Mutation)(base(method, target, id, body), r, pick);
    out.push({ name: `${id} ${method} ${mutation}`, bytes: Buffer.from(text, 'latin1'), callId: id });
  }
  return out;
}
