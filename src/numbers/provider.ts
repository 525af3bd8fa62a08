/**
 * Number-provider port: where purchasable numbers come from. The built-in provider is a local pool
 * (NUMBER_POOL) so operators can hand out their own DID ranges; a carrier API can implement the same
 * port later.
 */
import { randomInt } from 'node:crypto';
import { ConfigError } from '../config.js';
import { isE164 } from './address.js';

export interface NumberRequest {
  /** An exact E.164 number, or… */
  readonly phoneNumber?: string | undefined;
  /** …a three-digit US/Canada area code: any free number of that area. */
  readonly areaCode?: string | undefined;
}

export interface NumberProvider {
  /**
   * A number that satisfies the request and is not in `taken`, or null when none matches.
   * The caller makes ownership unique (the database constraint), so a race loses cleanly.
   */
  find(request: NumberRequest, taken: (e164: string) => Promise<boolean>): Promise<string | null>;
}

interface Range {
  readonly from: bigint;
  readonly to: bigint;
  readonly digits: number;
}

/**
 * Parses NUMBER_POOL entries: an E.164 number (`+15551234567`), a range of equal-length numbers
 * (`+15550000000-+15550009999`) or a North American prefix with a trailing `*` (`+1555123*`: every
 * 11-digit +1 number starting so). Throws on a bad entry.
 */
export function parsePool(entries: readonly string[]): Range[] {
  return entries.map((entry) => {
    const range = /^(\+\d+)-(\+\d+)$/.exec(entry);
    if (range) {
      const [a, b] = [range[1] as string, range[2] as string];
      if (!isE164(a) || !isE164(b) || a.length !== b.length || BigInt(a.slice(1)) > BigInt(b.slice(1))) {
        throw new ConfigError(`NUMBER_POOL: bad range "${entry}"`);
      }
      return { from: BigInt(a.slice(1)), to: BigInt(b.slice(1)), digits: a.length - 1 };
    }
    const prefix = /^\+1(\d{0,9})\*$/.exec(entry);
    if (prefix) {
      const p = prefix[1] as string;
      const pad = 10 - p.length;
      return { from: BigInt(`1${p}${'0'.repeat(pad)}`), to: BigInt(`1${p}${'9'.repeat(pad)}`), digits: 11 };
    }
    if (isE164(entry))
      return { from: BigInt(entry.slice(1)), to: BigInt(entry.slice(1)), digits: entry.length - 1 };
    throw new ConfigError(`NUMBER_POOL: bad entry "${entry}" (use +E164, +E164-+E164 or +1prefix*)`);
  });
}

const ATTEMPTS = 64;

/**
 * The local pool. Without entries it is open: any valid E.164 number may be purchased, and an area
 * code yields a random `+1 <area> 555 xxxx` number.
 */
export class LocalPoolProvider implements NumberProvider {
  private readonly ranges: Range[];

  constructor(pool: readonly string[]) {
    this.ranges = parsePool(pool);
  }

  private inPool(e164: string): boolean {
    if (this.ranges.length === 0) return true;
    const n = BigInt(e164.slice(1));
    return this.ranges.some((r) => r.digits === e164.length - 1 && n >= r.from && n <= r.to);
  }

  async find(request: NumberRequest, taken: (e164: string) => Promise<boolean>): Promise<string | null> {
    if (request.areaCode !== undefined) return this.byAreaCode(request.areaCode, taken);
    const number = request.phoneNumber;
    if (number === undefined || !isE164(number) || !this.inPool(number)) return null;
    return (await taken(number)) ? null : number;
  }

  private async byAreaCode(area: string, taken: (e164: string) => Promise<boolean>): Promise<string | null> {
    const lo = BigInt(`1${area}0000000`);
    const hi = BigInt(`1${area}9999999`);
    const candidates =
      this.ranges.length === 0
        ? [{ from: BigInt(`1${area}5550000`), to: BigInt(`1${area}5559999`) }]
        : this.ranges
            .filter((r) => r.digits === 11 && r.to >= lo && r.from <= hi)
            .map((r) => ({ from: r.from > lo ? r.from : lo, to: r.to < hi ? r.to : hi }));
    if (candidates.length === 0) return null;
    for (let i = 0; i < ATTEMPTS; i++) {
      const r = candidates[randomInt(candidates.length)] as { from: bigint; to: bigint };
      const span = r.to - r.from + 1n;
      const offset = span > 281474976710655n ? 0n : BigInt(randomInt(Number(span)));
      const e164 = `+${r.from + offset}`;
      if (!(await taken(e164))) return e164;
    }
    // Random probing failed (pool nearly full): walk the candidates in order.
    for (const r of candidates) {
      for (let n = r.from, k = 0; n <= r.to && k < 10_000; n++, k++) {
        if (!(await taken(`+${n}`))) return `+${n}`;
      }
    }
    return null;
  }
}
