/** Presentation of E.164 numbers; what counts as one is decided in address.ts alone. */

export { isE164 } from './address.js';

const NANP_TOLL_FREE = new Set(['800', '833', '844', '855', '866', '877', '888']);

/** `local` or `tollfree` as the number shows it (NANP toll-free area codes); mobile is chosen at purchase. */
export function numberTypeOf(e164: string): 'local' | 'tollfree' {
  return e164.startsWith('+1') && NANP_TOLL_FREE.has(e164.slice(2, 5)) ? 'tollfree' : 'local';
}

/** The default FriendlyName: `(555) 123-4567` for NANP numbers, the E.164 form otherwise. */
export function formatNumber(e164: string): string {
  const m = /^\+1(\d{3})(\d{3})(\d{4})$/.exec(e164);
  return m ? `(${m[1]}) ${m[2]}-${m[3]}` : e164;
}
