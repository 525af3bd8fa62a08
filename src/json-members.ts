/**
 * Members of a parsed JSON document: where a problem is (a path of member names and indexes, shown
 * as a JSON Pointer or in dotted form) and the first member the store could not hold.
 */
import { INVALID_TEXT_PROBLEM, invalidTextReason } from './storable-text.js';

/** Where a problem is: member names and array indexes from the document's root. */
export type MemberPath = readonly (string | number)[];

/** Segments shown in a message; a deeper path ends in `…` so messages stay short. */
const SHOWN_SEGMENTS = 32;
const shown = (path: MemberPath, format: (s: string | number) => string): string =>
  path.slice(0, SHOWN_SEGMENTS).map(format).join('') + (path.length > SHOWN_SEGMENTS ? '…' : '');

/** `.outbound-voice[0].proxy[1].match`, for JSON carried in a form member (`ConfigurationData…`). */
export const dottedPath = (path: MemberPath): string =>
  shown(path, (s) => (typeof s === 'number' ? `[${s}]` : `.${s}`));

/** `/multiprovider/outbound-voice/0/proxy/1/match` (RFC 6901), for JSON documents. */
export const jsonPointer = (path: MemberPath): string =>
  shown(path, (s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`);

/** A member the store cannot hold, and why. */
export interface UnstorableMember {
  readonly path: MemberPath;
  readonly problem: string;
}

/**
 * The first member name or string value of `value` holding NUL or a lone surrogate, unknown members
 * included; null when there is none. Iterative, so a deeply nested value cannot exhaust the stack.
 */
export function firstUnstorableMember(value: unknown, base: MemberPath = []): UnstorableMember | null {
  interface Item {
    readonly value: unknown;
    readonly parent: Item | null;
    readonly key: string | number | null;
  }
  const pathOf = (item: Item): MemberPath => {
    const keys: (string | number)[] = [];
    for (let i: Item | null = item; i && i.key !== null; i = i.parent) keys.unshift(i.key);
    return [...base, ...keys];
  };
  const stack: Item[] = [{ value, parent: null, key: null }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const v = item.value;
    if (typeof v === 'string') {
      const reason = invalidTextReason(v);
      if (reason) return { path: pathOf(item), problem: INVALID_TEXT_PROBLEM[reason] };
    } else if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) stack.push({ value: x, parent: item, key: i });
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        const reason = invalidTextReason(k);
        if (reason)
          return { path: pathOf(item), problem: `has a member name that ${INVALID_TEXT_PROBLEM[reason]}` };
        stack.push({ value: x, parent: item, key: k });
      }
    }
  }
  return null;
}
