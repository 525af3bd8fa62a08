/**
 * Number-provider port: where purchasable numbers come from. The built-in provider is a local pool
 * (NUMBER_POOL) so operators can hand out their own DID ranges; a carrier API can implement the same
 * port later.
 */
import { randomInt } from 'node:crypto';
import { ConfigError } from '../config.js';
import { isE164 } from './address.js';
import {
  type AvailableNumber,
  callingCodeOf,
  countryOfNumber,
  describeNumber,
  matches,
  type NumberSearch,
} from './available.js';

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
  /**
   * Up to `search.limit` numbers that match and that `takenAmong` does not report as owned: what
   * AvailablePhoneNumbers shows, each of which `find` would then sell.
   */
  search(
    search: NumberSearch,
    takenAmong: (e164s: readonly string[]) => Promise<Set<string>>,
  ): Promise<AvailableNumber[]>;
  /** ISO codes of the countries it can offer numbers in (AvailablePhoneNumbers' country list). */
  countries(): string[];
}

interface Range {
  readonly from: bigint;
  readonly to: bigint;
  readonly digits: number;
  /** The operator's label for where the numbers are (`@NJ` on the entry), for InRegion. */
  readonly region?: string | null;
}

/** Candidates one search examines at most: a search never walks a whole large pool. */
const SEARCH_BUDGET = 200_000;
const NANP_TOLL_FREE_AREAS = ['800', '833', '844', '855', '866', '877', '888'];

/**
 * Parses NUMBER_POOL entries: an E.164 number (`+15551234567`), a range of equal-length numbers
 * (`+15550000000-+15550009999`) or a North American prefix with a trailing `*` (`+1555123*`: every
 * 11-digit +1 number starting so), each optionally followed by `@Region` (`+1201555*@NJ`), the label
 * AvailablePhoneNumbers' InRegion matches. Throws on a bad entry.
 */
export function parsePool(entries: readonly string[]): Range[] {
  return entries.map((labelled) => {
    const at = labelled.lastIndexOf('@');
    const entry = at < 0 ? labelled : labelled.slice(0, at);
    const region = at < 0 ? null : labelled.slice(at + 1);
    if (region !== null && !/^[A-Za-z0-9 _-]{1,32}$/.test(region)) {
      throw new ConfigError(`NUMBER_POOL: bad region in "${labelled}" (letters, digits, space, _ or -)`);
    }
    return { ...parseRange(entry), region };
  });
}

function parseRange(entry: string): Range {
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

  countries(): string[] {
    if (this.ranges.length === 0) return ['US', 'CA'];
    const found = new Set<string>();
    for (const r of this.ranges) {
      const country = countryOfNumber(`+${r.from}`);
      if (country) found.add(country);
    }
    return [...found].sort();
  }

  async search(
    search: NumberSearch,
    takenAmong: (e164s: readonly string[]) => Promise<Set<string>>,
  ): Promise<AvailableNumber[]> {
    const found: AvailableNumber[] = [];
    let batch: Array<{ e164: string; region: string | null }> = [];
    const settle = async () => {
      const taken = await takenAmong(batch.map((c) => c.e164));
      for (const c of batch) {
        if (taken.has(c.e164) || found.length >= search.limit) continue;
        const d = describeNumber(c.e164);
        found.push({
          phoneNumber: c.e164,
          isoCountry: d.country ?? search.country,
          region: c.region,
          kind: d.kind,
        });
      }
      batch = [];
    };
    let budget = SEARCH_BUDGET;
    for (const r of this.searchRanges(search)) {
      const span = r.to - r.from + 1n;
      // A random start so that two searches do not offer the same numbers first.
      const start = span > 281474976710655n ? 0n : BigInt(randomInt(Number(span)));
      for (let i = 0n; i < span && budget > 0; i++, budget--) {
        const e164 = `+${r.from + ((start + i) % span)}`;
        if (!matches(e164, r.region ?? null, search)) continue;
        batch.push({ e164, region: r.region ?? null });
        // Ask about twice what is missing: most candidates are free, and one query settles them.
        if (batch.length >= 2 * (search.limit - found.length)) {
          await settle();
          if (found.length >= search.limit) return found;
        }
      }
      if (budget === 0) break;
    }
    if (batch.length > 0) await settle();
    return found;
  }

  /**
   * The ranges a search walks: the pool's, cut to the area code; an open pool offers fictional
   * North American numbers (`+1 NPA 555 xxxx`) and nothing elsewhere.
   */
  private *searchRanges(search: NumberSearch): Generator<Range> {
    const window = (area: string) => ({ lo: BigInt(`1${area}0000000`), hi: BigInt(`1${area}9999999`) });
    if (this.ranges.length > 0) {
      const w = search.areaCode !== undefined ? window(search.areaCode) : null;
      for (const r of this.ranges) {
        if (!w) yield r;
        else if (r.digits === 11 && r.to >= w.lo && r.from <= w.hi)
          yield { ...r, from: r.from > w.lo ? r.from : w.lo, to: r.to < w.hi ? r.to : w.hi };
      }
      return;
    }
    if (callingCodeOf(search.country) !== '1' || search.kind === 'mobile') return;
    const open = (area: string): Range => ({
      from: BigInt(`1${area}5550000`),
      to: BigInt(`1${area}5559999`),
      digits: 11,
      region: null,
    });
    if (search.areaCode !== undefined) {
      yield open(search.areaCode);
      return;
    }
    if (search.kind === 'tollfree') {
      for (const area of NANP_TOLL_FREE_AREAS) yield open(area);
      return;
    }
    // Every NANP area code shape (N, then not N11), from a random one onwards.
    const first = randomInt(200, 1000);
    for (let k = 0; k < 800; k++) {
      const npa = 200 + ((first - 200 + k) % 800);
      if (npa % 100 === 11) continue;
      yield open(String(npa));
    }
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
