/** `<Email>`: send an email (RCML Email verb). */
import type { AttrsOf, VerbSchema } from '../schema.js';

const ADDRESSES = /^[^\s<>,;]+@[^\s<>,;]+(\s*[,;]\s*[^\s<>,;]+@[^\s<>,;]+)*$/;

export const emailAttrs = {
  to: { type: 'string', default: null, pattern: ADDRESSES, maxLength: 2048 },
  from: { type: 'string', default: null, pattern: ADDRESSES, maxLength: 320 },
  subject: { type: 'string', default: null, maxLength: 998 },
  cc: { type: 'string', default: null, pattern: ADDRESSES, maxLength: 2048 },
  bcc: { type: 'string', default: null, pattern: ADDRESSES, maxLength: 2048 },
  type: { type: 'enum', values: ['text/plain', 'text/html'], default: 'text/plain' },
} as const;
export type EmailAttrs = AttrsOf<typeof emailAttrs>;
export const email: VerbSchema = {
  name: 'Email',
  attrs: emailAttrs,
  text: { required: true, kind: 'plain' },
  children: [],
  check: (node) => (node.attrs.to === null ? 'needs a valid `to` address' : null),
};
