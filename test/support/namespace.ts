/** The test namespace (database + Redis prefix) is shared with the benchmarks, so it lives in ops/lib. */
export * from '../../ops/lib/namespace.js';
