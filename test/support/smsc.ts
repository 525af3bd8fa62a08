/** The scriptable SMSC is shared with the demo's simulator and the benchmarks, so it lives in ops/lib. */
export * from '../../ops/lib/smsc.js';
