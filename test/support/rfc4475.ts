/**
 * RFC 4475 "SIP Torture Test Messages": the 49 messages of its section 3, byte-exact, as decoded from the
 * RFC's own Appendix A archive (see test/fixtures/rfc4475/README.md), and the outcome class each message
 * should get from a robust SIP server, taken from the RFC's text for that message.
 *
 * Where the RFC leaves the choice to the element ("it is acceptable to reject ... an element that is liberal
 * in what it accepts may ..."), the class below is the one a strict-but-robust server returns, and `note`
 * says so.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

export type TortureOutcome =
  | 'valid' // a well-formed request the server must process: a request gets a non-parse answer (200/401/404/406/483/501...), not 400
  | 'bad-request' // invalid request → 400
  | 'bad-version' // badvers → 505
  | 'unsupported-scheme' // unkscm (and novelsc) → 416
  | 'bad-extension' // bext01 → 420
  | 'unsupported-media' // invut → 415
  | 'drop-response' // malformed response → silently dropped
  | 'valid-response'; // well-formed response → parsed (no transaction: dropped quietly)

export interface TortureCase {
  name: string;
  section: string;
  kind: 'request' | 'response';
  outcome: TortureOutcome;
  note: string;
  sha256: string;
}

/** The directory holding `<name>.dat`, `archive.b64` and `SHA256SUMS`. */
export const TORTURE_DIR = new URL('../fixtures/rfc4475/', import.meta.url);

export const TORTURE_CASES: readonly TortureCase[] = [
  // 3.1.1 Valid messages: parsers must accept them; elements process them normally.
  {
    name: 'wsinv',
    section: '3.1.1.1',
    kind: 'request',
    outcome: 'valid',
    note: 'A Short Tortuous INVITE: folding, LWS around separators, compact and long header names, leading zeros; all elements treat it as well-formed.',
    sha256: 'd6f6cdee99cd0a1f8e3d9a0fdd67c877700e19ab86d8186dada06f61260e3e61',
  },
  {
    name: 'intmeth',
    section: '3.1.1.2',
    kind: 'request',
    outcome: 'valid',
    note: 'Wide range of valid characters; unknown method. Contains a quoted NUL (0x00) in To and UTF-8 in From and an extension header. Proxy: forward or 404; endpoint: 501 with Allow.',
    sha256: 'b957a8292c1c0a9851fe94705b90f94320738f43aacde64998e401f742ef688d',
  },
  {
    name: 'esc01',
    section: '3.1.1.3',
    kind: 'request',
    outcome: 'valid',
    note: 'Valid use of % escaping in Request-URI, From/To userparts and Contact URI parameters; "v%61lue%25%34%31" unescapes once to "value%41".',
    sha256: 'be3a316d4ce5f69cad474646191e390dd4b50fc8371e44b5197fe1237781973e',
  },
  {
    name: 'escnull',
    section: '3.1.1.4',
    kind: 'request',
    outcome: 'valid',
    note: 'REGISTER with %00 in userparts; registers two distinct contacts (%00 and %00%00); unescaping must not truncate the AOR.',
    sha256: '263fe2ecd12a5ccbb6c67b3174e9211d11da9b600e7d69666a86d2ee42873e90',
  },
  {
    name: 'esc02',
    section: '3.1.1.5',
    kind: 'request',
    outcome: 'valid',
    note: 'Method RE%47IST%45R is unknown (not REGISTER): an endpoint answers 501. Two Contact values, not three (C%6Fntact is another header).',
    sha256: '9a9c59449f00327b02071feafc8e5c2a261c98c818044167894cc17809a12199',
  },
  {
    name: 'lwsdisp',
    section: '3.1.1.6',
    kind: 'request',
    outcome: 'valid',
    note: 'No LWS between display name and "<"; invalid per the RFC 3261 grammar (a known spec bug) but elements should accept it.',
    sha256: 'd1b36b6316c12824f6f04bf6b1fd1f021cade9b74871693b9c3474cd9fa7f4e6',
  },
  {
    name: 'longreq',
    section: '3.1.1.7',
    kind: 'request',
    outcome: 'valid',
    note: 'Long header values, a very long tag, Call-ID and branch, 34 Via values in mixed name case.',
    sha256: '185739292bc676760e5b1cca77c87705aa570240171c506ad76f8c35af0ecdaa',
  },
  {
    name: 'dblreq',
    section: '3.1.1.8',
    kind: 'request',
    outcome: 'valid',
    note: 'REGISTER with Content-Length 0 followed by octets that look like an INVITE: handle the REGISTER, ignore the trailing octets (RFC 3261 18.3).',
    sha256: 'a6be48426565c2a705389c4ce2ea17e57b891cb13f80490a2cb9392c797b46ef',
  },
  {
    name: 'semiuri',
    section: '3.1.1.9',
    kind: 'request',
    outcome: 'valid',
    note: 'Request-URI user part is "user;par=u@example.net" (semicolon and escaped @ in the userinfo).',
    sha256: '87bbaed6b4b354dbd3c5c7a20e66686303c63e43a0aa19b89de1ac75231611a2',
  },
  {
    name: 'transports',
    section: '3.1.1.10',
    kind: 'request',
    outcome: 'valid',
    note: 'Via values with UDP, SCTP, TLS, an unknown transport (UNKNOWN) and TCP.',
    sha256: '33b4553a3b9418121b099ff07882535151edd6a1e81898c63a916aad2cbf90bc',
  },
  {
    name: 'mpart01',
    section: '3.1.1.11',
    kind: 'request',
    outcome: 'valid',
    note: 'MESSAGE with a multipart/mixed body whose second part is binary (contains 0x00 and bare 0x0D octets); frame by Content-Length. Valid even if the application does not support the body.',
    sha256: '92147c8e24997bac59629e1b163767697d0d6d499af87f89e325d69968bec3ba',
  },
  {
    name: 'unreason',
    section: '3.1.1.12',
    kind: 'response',
    outcome: 'valid-response',
    note: '200 response with an unusual reason phrase containing non-ASCII UTF-8; well-formed, parser must accept it.',
    sha256: '4f939d6ebf4817eea70f011d3209e83732872ffc20ffd304b244084dc392f4d7',
  },
  {
    name: 'noreason',
    section: '3.1.1.13',
    kind: 'response',
    outcome: 'valid-response',
    note: '100 response with an empty reason phrase (the SP after the code is present); well-formed.',
    sha256: '07e11e470a69fffa3674de805e5165d1351a9439a91045ee70c9570ea24ab4fe',
  },

  // 3.1.2 Invalid messages.
  {
    name: 'badinv01',
    section: '3.1.2.1',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Extraneous ";" and "," in Via and Contact; syntactically invalid: 400.',
    sha256: '9ee2b88f2e0b5a9eeb9bf729b6177f0a0c7d0b5e6c84be593e0480d7962f3ab8',
  },
  {
    name: 'clerr',
    section: '3.1.2.2',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Content-Length 9999 larger than the body. Over UDP: 400. Over a stream the receiver can only wait for more data and close the connection if none comes.',
    sha256: 'd9da629086a38df433438fb0fb19a8730f34516f049a5520dd0cac3285485290',
  },
  {
    name: 'ncl',
    section: '3.1.2.3',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Content-Length -999: respond with an error (400) and discard the rest of the datagram; over TCP the framing error is unrecoverable, close the connection. Never use the value as a counter or index.',
    sha256: '7ea6538edc1f054fdb6cd1c821040460cffca3cb682fa2e8e2a502d92170b4c2',
  },
  {
    name: 'scalar02',
    section: '3.1.2.4',
    kind: 'request',
    outcome: 'bad-request',
    note: 'CSeq > 2^32-1 (plus Max-Forwards 300, huge Expires and contact expires): 400 because of the CSeq.',
    sha256: '53158177326568e9964bce5dcfac27a2bf8a90953bbc03f6c5e2775864a97e4b',
  },
  {
    name: 'scalarlg',
    section: '3.1.2.5',
    kind: 'response',
    outcome: 'drop-response',
    note: '503 response with CSeq > 2^32-1, huge Retry-After and a 4-digit warn-code: the receiver simply discards it.',
    sha256: '0957eca31737e3592eb1418bb41e9f5219278a78ff420111620d7fb60175b551',
  },
  {
    name: 'quotbal',
    section: '3.1.2.6',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Unterminated quoted string in the To display name: 400. (RFC allows inferring the quote; a robust server does not guess.)',
    sha256: 'e61978a2ea359fc666f0336fe4dbc623447532280e3273ea98119b3d3f788c84',
  },
  {
    name: 'ltgtruri',
    section: '3.1.2.7',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Request-URI enclosed in "<>": "reasonable always to reject" with 400; liberal elements may ignore the brackets but must not forward them.',
    sha256: 'bcacb2dc17610e8cc8f9b8b0e3d6ee65ab473f93787a03bbd33579e1cea473df',
  },
  {
    name: 'lwsruri',
    section: '3.1.2.8',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Embedded LWS in the Request-URI ("; lr"): should respond 400.',
    sha256: '3e22ceeca585ad23cc180208e2dad94e0a5aa4bb877a61cac443aa927f758b9e',
  },
  {
    name: 'lwsstart',
    section: '3.1.2.9',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Multiple SP between Request-Line elements. RFC: acceptable to reject as malformed, or be liberal and ignore them; chosen: 400, the Request-Line grammar is exact.',
    sha256: 'f884e5626c6c5b1210cfc4a3540b8a28bd52939cff092f3f0c5c971e032adb0e',
  },
  {
    name: 'trws',
    section: '3.1.2.10',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Two SP after SIP/2.0 on the Request-Line. RFC: acceptable to reject as malformed, or ignore; chosen: 400 as for lwsstart. (The archive has "host1.examle.com" in Via where the section text says example.)',
    sha256: '64ae20694026e28c10746b57386b7fd1276de02b6f8d42d418070e87d6f4499f',
  },
  {
    name: 'escruri',
    section: '3.1.2.11',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Escaped headers (?Route=...) in the Request-URI. RFC: acceptable to reject with 400, or ignore them (never turn them into headers); chosen: 400.',
    sha256: 'c3cf30af13a9d107829cc105effd79355f1139c6ecc683a048b4c27951f8f416',
  },
  {
    name: 'baddate',
    section: '3.1.2.12',
    kind: 'request',
    outcome: 'valid',
    note: 'Date with time zone EST (only GMT is valid). RFC: an element should not reject unless the Date matters to its processing; our server does not use Date, so the INVITE is processed normally (not 400).',
    sha256: '1208a6e3e0c8a8c33a06a1f3733d158413cb72e58c379d094c4ecea11e9d4c28',
  },
  {
    name: 'regbadct',
    section: '3.1.2.13',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Contact in addr-spec form with an escaped header (must be name-addr): reasonable to answer 400; inferring the <> is possible here but not in general, so a robust registrar rejects.',
    sha256: '575d27530275814c1c98be164808fac89a0e2b4fc899dadcd97e6ba499437bda',
  },
  {
    name: 'badaspec',
    section: '3.1.2.14',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Spaces inside the To addr-spec ("< sip:... >"): parser must not break; reasonable to reject with 400 (chosen), liberal elements may ignore the spaces.',
    sha256: 'f8f6e2f4247287b0be6adb5ac222a6db4759395e44d27d2ddb9b39393e94867e',
  },
  {
    name: 'baddn',
    section: '3.1.2.15',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Unquoted display names with non-token characters (","): reasonable always to reject with 400. The archive copy also lacks the empty line ending the headers (ends "l: 0" CRLF).',
    sha256: '9d9428e8017092f194ec11077ba6865c251308cdfd7fd9db6a993b28e5748951',
  },
  {
    name: 'badvers',
    section: '3.1.2.16',
    kind: 'request',
    outcome: 'bad-version',
    note: 'SIP/7.0 on the Request-Line (and Via): 505 Version Not Supported.',
    sha256: '037d702d19e934bfeebbd2609050d7d54928d590cf90c78f3914522771dd8e03',
  },
  {
    name: 'mismatch01',
    section: '3.1.2.17',
    kind: 'request',
    outcome: 'bad-request',
    note: 'OPTIONS Request-Line with CSeq method INVITE: any element responds 400.',
    sha256: 'a2c285636e451e75420da0cc62ee55ca3e398827008418befbfb078726bf0793',
  },
  {
    name: 'mismatch02',
    section: '3.1.2.18',
    kind: 'request',
    outcome: 'valid',
    note: 'Unknown method NEWMETHOD with CSeq method INVITE. RFC: respond 501 Not Implemented (400 also acceptable, 501 preferred as more future-proof); classed valid because the expected answer is 501, not 400.',
    sha256: '01b287f9a9c492f7f57405c36c8a2af0e2393896ed2d25fb92b502f2a6722bc4',
  },
  {
    name: 'bigcode',
    section: '3.1.2.19',
    kind: 'response',
    outcome: 'drop-response',
    note: 'Status code 4294967301 (> 699, overflows 32 bits): simply drop.',
    sha256: 'f79450070975da54c3525c9a5cbe75bae3c9d8cb92eba609772c26f66f225c2e',
  },

  // 3.2 Transaction layer semantics.
  {
    name: 'badbranch',
    section: '3.2.1',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Via branch is exactly the magic cookie "z9hG4bK" with no identifier. RFC: reject with 400 (preferably statelessly) or fall back to RFC 2543 matching; chosen: stateless 400.',
    sha256: 'cb049c727f16b5ec49e822f9e8b7d0ee20ca2d20ffb50baecd0b411a5e64fa7d',
  },

  // 3.3 Application-layer semantics.
  {
    name: 'insuf',
    section: '3.3.1',
    kind: 'request',
    outcome: 'bad-request',
    note: 'No Call-ID, From or To: must not break; ideally 400.',
    sha256: '1e3efd9f3b238c6351ba12bc7eb46d843f2761b5d4a6b82b63bffdf07f2c5aee',
  },
  {
    name: 'unkscm',
    section: '3.3.2',
    kind: 'request',
    outcome: 'unsupported-scheme',
    note: 'Request-URI with unknown scheme "nobodyKnowsThisScheme": well-formed; 416 Unsupported URI Scheme. Do not route on the To header.',
    sha256: '81be1a6a566c7ab52fe1c58c4a75440dfd697ad04c5e09fa71340de7da7b8bbb',
  },
  {
    name: 'novelsc',
    section: '3.3.3',
    kind: 'request',
    outcome: 'unsupported-scheme',
    note: 'Request-URI with the registered but atypical scheme soap.beep: well-formed. An element that never accepts this scheme treats it as unknown: 416 (404 only if it might accept some such URIs; ours does not).',
    sha256: '9a50a7343fcf685e77c4d0f477138a28f32a41c75aa566d200f3df210b01e648',
  },
  {
    name: 'unksm2',
    section: '3.3.4',
    kind: 'request',
    outcome: 'bad-request',
    note: 'REGISTER with To isbn:, From http:, Contact name: URIs: syntactically valid, parser must not fail; a registrar rejects it with 400 because the To AOR must be SIP or SIPS (a proxy would treat it like any other request).',
    sha256: 'f6914409ced613ef5eb56e264d2f096dac26ab9e397d6a638934d2027f1f6acb',
  },
  {
    name: 'bext01',
    section: '3.3.5',
    kind: 'request',
    outcome: 'bad-extension',
    note: 'Require and Proxy-Require with unknown option tags: 420 Bad Extension with Unsupported listing the Require tags (a proxy would list the Proxy-Require tags).',
    sha256: '57181987c02c4f5752b7aa8c2847311f6184216ce7621e40303015949e70761c',
  },
  {
    name: 'invut',
    section: '3.3.6',
    kind: 'request',
    outcome: 'unsupported-media',
    note: 'INVITE with body type application/unknownformat: parser must not fail; an endpoint answers 415 Unsupported Media Type (a proxy would process it as any INVITE).',
    sha256: '9b39e824947df46f90f824cd308fb3c118f548d94637f581101e355b381a0d92',
  },
  {
    name: 'regaut01',
    section: '3.3.7',
    kind: 'request',
    outcome: 'valid',
    note: 'REGISTER with Authorization in an unknown scheme: well-formed. A registrar that authenticates answers 401 with a challenge in a scheme it knows; one that does not ignores the header (200); a non-registrar endpoint 405. Never 400.',
    sha256: '885ba0488872cfc04a3c7622854b8381955a5ee890745d6010834e3731a73faa',
  },
  {
    name: 'multi01',
    section: '3.3.8',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Multiple Call-ID, To, From, Max-Forwards and CSeq values: must not break; respond 400.',
    sha256: 'd156ab12105b4bfd8a6498de6f7195087058162b8cda1606169855b722411791',
  },
  {
    name: 'mcl01',
    section: '3.3.9',
    kind: 'request',
    outcome: 'bad-request',
    note: 'Two conflicting Content-Length values (13 and 5): a framing error; respond with an error (400) and discard the datagram rest; over TCP close the connection.',
    sha256: '887191619bf003b7e87399200b5cf4c3b5397344dbf70288ad5e23bd157b7fe4',
  },
  {
    name: 'bcast',
    section: '3.3.10',
    kind: 'response',
    outcome: 'valid-response',
    note: '200 OK whose second Via sent-by is 255.255.255.255: well-formed, parsers must not fail; an endpoint discards it (no matching transaction) and a proxy must never forward it to the broadcast address.',
    sha256: '073637c63597199179cf5fc91b980b2d530c066a0048ea3b908772def57b4c36',
  },
  {
    name: 'zeromf',
    section: '3.3.11',
    kind: 'request',
    outcome: 'valid',
    note: 'Max-Forwards 0 on OPTIONS: legal. A proxy answers 483 Too Many Hops without forwarding; an endpoint processes it as if positive (200).',
    sha256: '50954ef47acca4f9f5263ded06246d06dee4e2ee508a8d284191795d7fddf365',
  },
  {
    name: 'cparam01',
    section: '3.3.12',
    kind: 'request',
    outcome: 'valid',
    note: 'REGISTER with Contact in addr-spec form: ";unknownparam" is a contact-param, not a url-param. Should succeed (200); the binding must not carry it as a url-parameter.',
    sha256: 'dfa6b5cdb289adc694b9b7e103ebfa7a2167335c46e5dc9de67055021910ae1c',
  },
  {
    name: 'cparam02',
    section: '3.3.13',
    kind: 'request',
    outcome: 'valid',
    note: 'REGISTER with Contact <...;unknownparam>: a url-parameter. Should succeed (200); later fetches include it in the contact URI.',
    sha256: 'e93574215bd1d804bb46cc15ca6176b567def7ea1b15f72ab2c2dcf598af465a',
  },
  {
    name: 'regescrt',
    section: '3.3.14',
    kind: 'request',
    outcome: 'valid',
    note: 'REGISTER whose Contact URI has an escaped Route header (?Route=%3C...%3E), properly in <>: should succeed (200) and keep the escaped header in the binding.',
    sha256: 'dab4087c133348b06fd7b3c4c7ef15094f8754e265e4e8c2137bb3ecda2ef477',
  },
  {
    name: 'sdp01',
    section: '3.3.15',
    kind: 'request',
    outcome: 'valid',
    note: 'INVITE with Accept: text/nobodyKnowsThis (no application/sdp). RFC: 406 Not Acceptable with Warning 399, or 400; classed valid as the preferred answer is the semantic 406, not a parse error.',
    sha256: '497c5f1ced6c7b579b48075e2dca919ce9b819a735964128a6e744a3a0b9e57f',
  },

  // 3.4 Backward compatibility.
  {
    name: 'inv2543',
    section: '3.4.1',
    kind: 'request',
    outcome: 'valid',
    note: 'RFC 2543 syntax: no Via branch, no From tag, no Content-Length (body is the rest of the datagram), no Max-Forwards. Accepted by elements keeping backward compatibility (RFC 2543 transaction matching).',
    sha256: '76fac8afe22dee49ea696b511621946694897ac7030fc5d07f57c8b487ce0521',
  },
];

/** The catalogue entry for `name`; throws for a name that is not one of the 49. */
export function tortureCase(name: string): TortureCase {
  const found = TORTURE_CASES.find((c) => c.name === name);
  if (!found) throw new Error(`rfc4475: no torture message named "${name}"`);
  return found;
}

/** The fixture bytes of `name`, after checking them against the pinned sha256; throws if they differ. */
export function loadTorture(name: string): Buffer {
  const entry = tortureCase(name);
  const bytes = readFileSync(new URL(`${entry.name}.dat`, TORTURE_DIR));
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== entry.sha256) {
    throw new Error(`rfc4475: ${entry.name}.dat has sha256 ${actual}, expected ${entry.sha256}`);
  }
  return bytes;
}
