/**
 * SMPP_URL parsing: `smpp://system_id:password@host:port?bind=transceiver&window=10&enquire_link=30`.
 * Several connections are comma-separated. Every option is documented in docs/smpp.md.
 */
import { SmppLimits, SmppTimers } from './timers.js';

export type BindMode = 'transceiver' | 'transmitter' | 'receiver';

/** One SMSC connection, validated. Durations in milliseconds. */
export interface SmppConnectionConfig {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  readonly systemId: string;
  readonly password: string;
  readonly systemType: string;
  readonly bind: BindMode;
  readonly window: number;
  readonly enquireLinkMs: number;
  readonly responseTimeoutMs: number;
  readonly reconnectMinMs: number;
  readonly reconnectMaxMs: number;
  readonly sourceTon: number;
  readonly sourceNpi: number;
  readonly destTon: number;
  readonly destNpi: number;
  readonly dataCoding: DataCodingChoice;
  readonly registeredDelivery: number;
}

/** `auto` = GSM-7 (0) when every character is in the GSM 03.38 alphabet, else UCS-2 (8). */
export type DataCodingChoice = 'auto' | 0 | 1 | 3 | 8;

/** Invalid SMPP_URL; the message never contains the password. */
export class SmppUrlError extends Error {
  override readonly name = 'SmppUrlError';
}

const KNOWN = new Set([
  'bind',
  'window',
  'enquire_link',
  'response_timeout',
  'reconnect_min',
  'reconnect_max',
  'system_type',
  'source_ton',
  'source_npi',
  'dest_ton',
  'dest_npi',
  'data_coding',
  'registered_delivery',
]);

function intOpt(q: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const raw = q.get(name);
  if (raw === null || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new SmppUrlError(`SMPP_URL option ${name} must be an integer`);
  const v = Number(raw);
  if (v < min || v > max) throw new SmppUrlError(`SMPP_URL option ${name} must be in ${min}..${max}`);
  return v;
}

/** Seconds (may be fractional, e.g. 0.2 in tests) → ms. */
function secondsOpt(
  q: URLSearchParams,
  name: string,
  fallbackMs: number,
  minS: number,
  maxS: number,
): number {
  const raw = q.get(name);
  if (raw === null || raw === '') return fallbackMs;
  if (!/^\d+(\.\d+)?$/.test(raw))
    throw new SmppUrlError(`SMPP_URL option ${name} must be a number of seconds`);
  const v = Number(raw);
  if (v < minS || v > maxS) throw new SmppUrlError(`SMPP_URL option ${name} must be in ${minS}..${maxS} s`);
  return Math.round(v * 1000);
}

/** Parse one `smpp://` (or `ssmpp://` for TLS) URL. */
export function parseSmppUrl(text: string): SmppConnectionConfig {
  let u: URL;
  try {
    u = new URL(text.trim());
  } catch {
    throw new SmppUrlError('SMPP_URL is not a URL');
  }
  if (u.protocol !== 'smpp:' && u.protocol !== 'ssmpp:') {
    throw new SmppUrlError('SMPP_URL scheme must be smpp: or ssmpp:');
  }
  const tls = u.protocol === 'ssmpp:';
  if (!u.hostname) throw new SmppUrlError('SMPP_URL needs a host');
  const systemId = decodeURIComponent(u.username);
  const password = decodeURIComponent(u.password);
  if (!systemId) throw new SmppUrlError('SMPP_URL needs a system_id (user part)');
  if (systemId.length > 15) throw new SmppUrlError('SMPP_URL system_id is longer than 15 octets');
  if (password.length > 8) throw new SmppUrlError('SMPP_URL password is longer than 8 octets');
  const q = u.searchParams;
  for (const key of q.keys()) {
    if (!KNOWN.has(key)) throw new SmppUrlError(`SMPP_URL has an unknown option ${key}`);
  }
  const bind = q.get('bind') ?? 'transceiver';
  if (bind !== 'transceiver' && bind !== 'transmitter' && bind !== 'receiver') {
    throw new SmppUrlError('SMPP_URL option bind must be transceiver, transmitter or receiver');
  }
  const systemType = q.get('system_type') ?? '';
  if (systemType.length > 12) throw new SmppUrlError('SMPP_URL system_type is longer than 12 octets');
  const dcRaw = q.get('data_coding') ?? 'auto';
  let dataCoding: DataCodingChoice;
  if (dcRaw === 'auto') dataCoding = 'auto';
  else if (dcRaw === '0' || dcRaw === '1' || dcRaw === '3' || dcRaw === '8') {
    dataCoding = Number(dcRaw) as 0 | 1 | 3 | 8;
  } else throw new SmppUrlError('SMPP_URL option data_coding must be auto, 0, 1, 3 or 8');
  const reconnectMinMs = secondsOpt(q, 'reconnect_min', SmppTimers.RECONNECT_MIN_MS, 0.01, 600);
  const reconnectMaxMs = secondsOpt(q, 'reconnect_max', SmppTimers.RECONNECT_MAX_MS, 0.01, 3600);
  if (reconnectMinMs > reconnectMaxMs)
    throw new SmppUrlError('SMPP_URL reconnect_min must be ≤ reconnect_max');
  const defaultPort = tls ? 3550 : 2775;
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : defaultPort,
    tls,
    systemId,
    password,
    systemType,
    bind,
    window: intOpt(q, 'window', SmppLimits.WINDOW, 1, 1000),
    enquireLinkMs: secondsOpt(q, 'enquire_link', SmppTimers.ENQUIRE_LINK_MS, 0.05, 3600),
    responseTimeoutMs: secondsOpt(q, 'response_timeout', SmppTimers.RESPONSE_TIMEOUT_MS, 0.05, 600),
    reconnectMinMs,
    reconnectMaxMs,
    sourceTon: intOpt(q, 'source_ton', 1, 0, 6),
    sourceNpi: intOpt(q, 'source_npi', 1, 0, 18),
    destTon: intOpt(q, 'dest_ton', 1, 0, 6),
    destNpi: intOpt(q, 'dest_npi', 1, 0, 18),
    dataCoding,
    registeredDelivery: intOpt(q, 'registered_delivery', 1, 0, 31),
  };
}

/** Parse a comma-separated SMPP_URL (or the list src/config.ts already split). */
export function parseSmppUrls(value: string | readonly string[]): SmppConnectionConfig[] {
  const parts = typeof value === 'string' ? value.split(',') : value.flatMap((v) => v.split(','));
  return parts
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map(parseSmppUrl);
}
