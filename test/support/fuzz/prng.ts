/**
 * The fuzzers' one seeded PRNG (mulberry32): small, fast, good enough to pick mutations, and the
 * same seed gives the same cases, so a failure's printed seed replays it.
 */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * The seed a fuzz run uses: `FUZZ_SEED`, else `fallback` (the suites pass a fixed seed at scale 1, so
 * `npm test` is repeatable, and a fresh one for larger runs, which explore).
 */
export function fuzzSeed(fallback: number): number {
  const s = process.env.FUZZ_SEED;
  return s === undefined || s === '' ? fallback : Number(s);
}

/** How many times larger than the default a fuzz run is: `FUZZ_SCALE` (default 1). */
export function fuzzScale(): number {
  const n = Number(process.env.FUZZ_SCALE ?? 1);
  return Number.isFinite(n) && n > 0 ? n : 1;
}
