/**
 * Responses written from a request's text rather than from a parsed message: the answer to a
 * request the checks refuse (validate.ts), and every answer to a REGISTER (register-request.ts).
 * Via, From, To (given a tag when it has none), Call-ID and CSeq are copied as they were written
 * (RFC 3261 §8.2.6.2), in the request's order.
 */
import { newTag } from './message.js';
import { headerLine, splitList, splitMessage } from './validate.js';

const COPIED: Readonly<Record<string, string>> = {
  via: 'Via',
  from: 'From',
  to: 'To',
  'call-id': 'Call-ID',
  cseq: 'CSeq',
};

/** Where the request came from, for its top Via (RFC 3261 §18.2.1, RFC 3581). */
export interface Source {
  readonly address: string;
  readonly port: number;
}

/** Whether a To value has a tag parameter (after its URI: a `;tag=` inside `<...>` is the URI's). */
function hasTag(value: string): boolean {
  const gt = value.lastIndexOf('>');
  return /;[ \t]*tag[ \t]*=/i.test(gt < 0 ? value : value.slice(gt + 1));
}

/** Name (lower case) of a Via parameter, as `splitList(entry, ';')` cuts it. */
export const paramName = (part: string): string => {
  const eq = part.indexOf('=');
  return (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
};

/** Value of a Via parameter ('' for a flag). */
export const paramValue = (part: string): string => {
  const eq = part.indexOf('=');
  return eq < 0 ? '' : part.slice(eq + 1).trim();
};

/**
 * The top Via entry as our answers carry it: `received` set to the source address and, when the
 * client asked for it, `rport` to the source port; the other parameters as written.
 */
function stamped(entry: string, source: Source): string {
  const parts = splitList(entry, ';');
  let out = parts[0] as string;
  let received = false;
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i] as string;
    const name = paramName(part);
    if (name === 'rport') out += `;rport=${source.port}`;
    else if (name === 'received') {
      out += `;received=${source.address}`;
      received = true;
    } else out += `;${part}`;
  }
  return received ? out : `${out};received=${source.address}`;
}

/**
 * The copied header lines (each ending in CRLF), or null without a Via. With `source`, the top Via
 * is stamped with it.
 */
export function copiedHead(
  names: readonly string[],
  values: readonly string[],
  source?: Source,
): string | null {
  let head = '';
  let viaSeen = false;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    const pretty = COPIED[name];
    if (pretty === undefined) continue;
    let value = values[i] as string;
    if (name === 'to' && !hasTag(value)) value = `${value};tag=${newTag()}`;
    else if (name === 'via' && !viaSeen) {
      viaSeen = true;
      if (source) {
        const entries = splitList(value);
        entries[0] = stamped(entries[0] as string, source);
        value = entries.join(', ');
      }
    }
    head += `${pretty}: ${value}\r\n`;
  }
  return viaSeen ? head : null;
}

/**
 * A response built from the raw request text, for requests the stack could not or should not parse.
 * Null when the request lacks what a response needs to find its way back (a Via).
 */
export function statelessResponse(raw: string, status: number, reason: string): string | null {
  const parts = splitMessage(raw);
  if (!parts) return null;
  const names: string[] = [];
  const values: string[] = [];
  for (const line of parts.headers) {
    const h = headerLine(line);
    if (!h) continue;
    names.push(h[0]);
    values.push(h[1]);
  }
  const head = copiedHead(names, values);
  return head === null ? null : `SIP/2.0 ${status} ${reason}\r\n${head}Content-Length: 0\r\n\r\n`;
}
