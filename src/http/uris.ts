/** Relative resource URIs (spec §General conventions 1); `.json` suffix in JSON representations. */
import type { Format } from './render.js';

export const API_VERSION = '2012-04-24';
export const API_ROOT = `/${API_VERSION}`;

export function uriOf(format: Format, path: string): string {
  return format === 'json' ? `${path}.json` : path;
}

export function accountPath(accountSid: string): string {
  return `${API_ROOT}/Accounts/${accountSid}`;
}
