/** The server-in-its-own-process starter is shared with the benchmarks, so it lives in ops/lib. */
export * from '../../ops/lib/server-process.js';
