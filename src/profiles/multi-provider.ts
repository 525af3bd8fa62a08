/**
 * Multi-provider configuration data (spec §Multi-provider extension configuration): parsed and
 * validated once, used by the SIP (outbound-voice) and SMS (outbound-sms) paths.
 */
import { dottedPath, firstUnstorableMember, type MemberPath } from '../json-members.js';
import { tenantPatternProblem } from '../security/tenant-pattern.js';
import type { MultiProviderConfig } from '../store/profile-store.js';

/** Thrown with the member path of the first problem. */
export class ConfigurationDataError extends Error {
  constructor(
    readonly path: MemberPath,
    readonly problem: string,
  ) {
    super(`ConfigurationData${dottedPath(path)}: ${problem}`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

// Every member ends up in a SIP message or a jsonb column: neither takes control characters (HTAB
// aside, RFC 3261 LWS) nor lone surrogates (no UTF-8 form; Postgres refuses them and NUL).
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

function str(o: Record<string, unknown>, key: string, path: MemberPath, required: boolean): void {
  const v = o[key];
  if (v === undefined) {
    if (required) throw new ConfigurationDataError([...path, key], 'is required');
    return;
  }
  if (typeof v !== 'string' || v === '')
    throw new ConfigurationDataError([...path, key], 'must be a non-empty string');
  if (CONTROL.test(v))
    throw new ConfigurationDataError([...path, key], 'must not contain control characters');
}

/**
 * Validates an already-parsed value; returns it typed. `path` prefixes the member paths of errors
 * (e.g. `['multiprovider']` inside a subscriber profile). Every `match` must be a usable tenant
 * pattern (src/security/tenant-pattern.ts), so a stored configuration never holds one that routing
 * would refuse or that could stall it.
 */
export function validateMultiProvider(value: unknown, path: MemberPath = []): MultiProviderConfig {
  if (!isObject(value)) throw new ConfigurationDataError(path, 'must be a JSON object');
  for (const key of Object.keys(value)) {
    if (key !== 'outbound-sms' && key !== 'outbound-voice')
      throw new ConfigurationDataError([...path, key], 'is not a known member');
  }
  const sms = value['outbound-sms'];
  if (sms !== undefined) {
    const p = [...path, 'outbound-sms'];
    if (!Array.isArray(sms) || sms.length !== 1 || !isObject(sms[0]))
      throw new ConfigurationDataError(p, 'must be an array with a single object');
    const id = sms[0].destination_network_id;
    const idPath = [...p, 0, 'destination_network_id'];
    if (id === undefined) throw new ConfigurationDataError(idPath, 'is required');
    if (!(typeof id === 'number' ? Number.isInteger(id) : typeof id === 'string' && /^\d+$/.test(id))) {
      throw new ConfigurationDataError(idPath, 'must be an integer value');
    }
  }
  const voice = value['outbound-voice'];
  if (voice !== undefined) {
    const p = [...path, 'outbound-voice'];
    if (!Array.isArray(voice) || voice.length !== 1 || !isObject(voice[0]))
      throw new ConfigurationDataError(p, 'must be an array with a single object');
    const proxies = voice[0].proxy;
    if (!Array.isArray(proxies) || proxies.length === 0)
      throw new ConfigurationDataError([...p, 0, 'proxy'], 'must be a non-empty array');
    proxies.forEach((proxy, i) => {
      const pp = [...p, 0, 'proxy', i];
      if (!isObject(proxy)) throw new ConfigurationDataError(pp, 'must be an object');
      str(proxy, 'uri', pp, true);
      str(proxy, 'username', pp, false);
      str(proxy, 'password', pp, false);
      str(proxy, 'match', pp, false);
      const problem = proxy.match === undefined ? null : tenantPatternProblem(proxy.match);
      if (problem) throw new ConfigurationDataError([...pp, 'match'], problem);
      if (proxy.headers !== undefined) {
        if (!Array.isArray(proxy.headers))
          throw new ConfigurationDataError([...pp, 'headers'], 'must be an array');
        proxy.headers.forEach((h, j) => {
          const hp = [...pp, 'headers', j];
          if (!isObject(h)) throw new ConfigurationDataError(hp, 'must be an object');
          for (const k of ['headerName', 'key', 'value']) str(h, k, hp, true);
        });
      }
    });
  }
  const unstorable = firstUnstorableMember(value, path);
  if (unstorable) throw new ConfigurationDataError(unstorable.path, unstorable.problem);
  return value as MultiProviderConfig;
}

/** Parses the ConfigurationData form parameter (a JSON string). */
export function parseConfigurationData(text: string): MultiProviderConfig {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ConfigurationDataError([], `is not valid JSON (${(e as Error).message})`);
  }
  return validateMultiProvider(value);
}
