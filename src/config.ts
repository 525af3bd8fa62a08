/**
 * Configuration: parsed once from the environment into a frozen, typed object.
 * Every variable is documented in README.md (section "Configuration"). Only src/main.ts and the
 * CLI scripts call loadConfig; everything else receives the parts it needs.
 */
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type MediaSettings, WEBRTC_CODEC_NAMES, type WebRtcCodecName } from './media/settings.js';
import { formatSipAddress, parseHostOrSipUri, SipUriError } from './sip/sip-uri.js';
import { parseSmppUrl } from './smpp/url.js';

export interface Config {
  readonly instanceId: string;
  readonly logLevel: string;
  /**
   * DRAIN_TIMEOUT (seconds): on SIGTERM the node takes no new calls and lets live ones run this long
   * before it ends them (with their callbacks) and exits.
   */
  readonly drainTimeoutMs: number;
  readonly http: {
    readonly host: string;
    readonly port: number;
    /** Base used in `uri` fields and Location headers, without a trailing slash. */
    readonly publicUrl: string;
    /** False when PUBLIC_URL was not set: the server then derives it from the port it listens on. */
    readonly publicUrlExplicit: boolean;
    /** Form and JSON body limit for every route except profiles (bytes). */
    readonly bodyLimit: number;
    /** Profile documents limit (spec §Limits: 10 MB). */
    readonly profileBodyLimit: number;
  };
  /** The supervisor stream's limits (docs/supervision.md). */
  readonly supervisorStream: {
    /** Bytes a client may leave unsent before it is disconnected (1013). */
    readonly maxBufferedBytes: number;
    readonly heartbeatMs: number;
    readonly metricsIntervalMs: number;
  };
  readonly database: { readonly url: string };
  readonly redis: {
    readonly url: string;
    readonly prefix: string;
    /** Redis Cluster root nodes (`host:port`); when set, REDIS_URL is not used. */
    readonly clusterNodes: readonly string[];
  };
  readonly admin: { readonly email: string; readonly password: string | undefined };
  readonly organization: { readonly defaultDomain: string };
  readonly sip: {
    /** SIP_ENABLED=false runs the REST API alone (no SIP listeners). */
    readonly enabled: boolean;
    readonly host: string;
    readonly port: number;
    /** Address advertised in Via, Contact and SDP. */
    readonly publicAddress: string;
    readonly udp: boolean;
    readonly tcp: boolean;
    /** RFC 7118 WebSocket listener port, or null for none. */
    readonly wsPort: number | null;
    /** RFC 7118 secure WebSocket listener port (browser phones), or null for none. */
    readonly wssPort: number | null;
    /** PEM files of the certificate chain and private key the WSS listener presents. */
    readonly tlsCert: string | null;
    readonly tlsKey: string | null;
    /** Optional list of IPs/CIDRs allowed to send INVITEs to hosted numbers (empty = any). */
    readonly trustedSources: readonly string[];
    /** Registrar: shortest and longest binding expiry granted, seconds (RFC 3261 §10.3). */
    readonly registrarMinExpires: number;
    readonly registrarMaxExpires: number;
    /** Platform default outbound proxy for PSTN numbers when an account has no multi-provider proxy. */
    readonly outboundProxy: string | null;
    /**
     * SIP_BLOCK_PRIVATE=true: tenant-controlled SIP destinations (Dial Sip, multi-provider proxies,
     * gateway Proxy) may not be loopback or private addresses either; link-local and metadata
     * addresses are refused always (src/security/address-policy.ts).
     */
    readonly blockPrivate: boolean;
    /**
     * GATEWAY_LEASE_MS: one node at a time REGISTERs each gateway, under a lease of this length in
     * Redis; when that node stops the next takes over at once, when it dies within this time.
     */
    readonly gatewayLeaseMs: number;
  };
  readonly media: MediaSettings;
  /**
   * MEDIA_ENGINE_NODE_ARGS: Node flags for the media engine process (space-separated), for diagnosis:
   * the engine does not inherit the server's flags and Node refuses `--cpu-prof` in NODE_OPTIONS, so
   * `MEDIA_ENGINE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/x'` is how the engine is profiled.
   */
  readonly mediaEngineNodeArgs?: readonly string[];
  /**
   * USSD push (docs/ussd.md): the USSD gateway's SIP address (USSD_GATEWAY_URI, host[:port] or a
   * sip: URI) and the digest credentials it may ask for; null: pushes are refused (503).
   */
  readonly ussd: {
    readonly gatewayUri: string | null;
    readonly gatewayUser: string | null;
    readonly gatewayPassword: string | null;
  };
  readonly recordings: { readonly dir: string };
  readonly numbers: {
    /** Local number pool of the built-in number provider: comma-separated E.164 ranges/prefixes. */
    readonly pool: readonly string[];
    /**
     * CALLER_ID_POLICY: `open` (default) takes any well-formed From on REST calls; `verified` takes an
     * E.164 From only when the account owns it or lists it in OutgoingCallerIds (Twilio's rule).
     */
    readonly callerIdPolicy: 'open' | 'verified';
  };
  readonly smpp: {
    readonly urls: readonly string[];
    /**
     * Resume lease on a pending outbound SMS (SMS_LEASE_MS): a node renews it while it works on the
     * message; after a crash another node (or the restarted one) resumes the message within it.
     */
    readonly leaseMs: number;
  };
  readonly smtp: { readonly url: string | null; readonly from: string | null };
  /**
   * `GET /metrics`: with METRICS_TOKEN set, scrapers must send `Authorization: Bearer <token>`;
   * unset, the endpoint is open like most Prometheus exporters (docs/decisions.md "Metrics endpoint").
   */
  readonly metrics: { readonly token: string | null };
  readonly webhooks: {
    readonly blockPrivate: boolean;
    readonly connectTimeoutMs: number;
    readonly totalTimeoutMs: number;
    readonly retries: number;
  };
  /** Login hardening (docs/decisions.md "Authentication throttling"). */
  readonly auth: {
    /** Failed password logins per identity within the window before it gets 429. */
    readonly identityFailures: number;
    /** Failed password logins per client address within the window before it gets 429. */
    readonly sourceFailures: number;
    readonly windowMs: number;
    /** Password verifications (scrypt, on libuv's thread pool) running at once on this node. */
    readonly verifyConcurrency: number;
    /** Verifications waiting for a slot; beyond it logins get 503 + Retry-After. */
    readonly verifyQueue: number;
    /** How long a verified password is remembered (ms). */
    readonly cacheMs: number;
    /** How long a throttled attempt is held before its 429 is sent (ms). */
    readonly tarpitMs: number;
  };
  readonly limits: {
    readonly callsPerSecondPerAccount: number;
    readonly concurrentCallsPerAccount: number;
    /** How long a node's claim on its live calls lasts without renewal (recovery after a crash). */
    readonly callLeaseMs: number;
  };
}

/** Raised for an environment value that cannot be used; main prints it as one line. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v.trim() === '' ? fallback : v.trim();
}

function optional(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function int(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function list(env: Env, name: string): string[] {
  const raw = optional(env, name);
  return raw === undefined
    ? []
    : raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
}

function ipv4List(env: Env, name: string): string[] {
  const values = list(env, name);
  for (const v of values) {
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(v))
      throw new ConfigError(`${name} must list IPv4 addresses, got "${v}"`);
  }
  return values;
}

/** WEBRTC_CODECS: the codecs offered and preferred toward browsers, in order (default opus,PCMU,PCMA). */
function webrtcCodecs(env: Env): WebRtcCodecName[] {
  const values = list(env, 'WEBRTC_CODECS');
  if (values.length === 0) return ['opus', 'PCMU', 'PCMA'];
  return values.map((v) => {
    const c = WEBRTC_CODEC_NAMES.find((n) => n.toLowerCase() === v.toLowerCase());
    if (!c) throw new ConfigError(`WEBRTC_CODECS takes ${WEBRTC_CODEC_NAMES.join(', ')}; got "${v}"`);
    return c;
  });
}

function callerIdPolicy(env: Env): 'open' | 'verified' {
  const v = str(env, 'CALLER_ID_POLICY', 'open');
  if (v !== 'open' && v !== 'verified') throw new ConfigError('CALLER_ID_POLICY must be open or verified');
  return v;
}

const UNSPECIFIED_ADDRESSES = new Set(['0.0.0.0', '::', '0:0:0:0:0:0:0:0']);

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'HTTP_PORT', 8080, 0, 65535);
  const host = str(env, 'HTTP_HOST', '0.0.0.0');
  const publicUrl = str(env, 'PUBLIC_URL', `http://127.0.0.1:${port}`).replace(/\/+$/, '');
  const sipHost = str(env, 'SIP_HOST', '127.0.0.1');
  const wsPort = optional(env, 'SIP_WS_PORT');
  const wssPort = optional(env, 'SIP_WSS_PORT');
  const tlsCert = optional(env, 'TLS_CERT') ?? null;
  const tlsKey = optional(env, 'TLS_KEY') ?? null;
  if (wssPort !== undefined && (!tlsCert || !tlsKey))
    throw new ConfigError('SIP_WSS_PORT needs TLS_CERT and TLS_KEY (PEM file paths)');
  const config: Config = {
    instanceId: str(env, 'INSTANCE_ID', `ID${randomBytes(16).toString('hex')}`),
    drainTimeoutMs: int(env, 'DRAIN_TIMEOUT', 30, 0, 3600) * 1000,
    logLevel: str(env, 'LOG_LEVEL', 'info'),
    http: {
      host,
      port,
      publicUrl,
      publicUrlExplicit: optional(env, 'PUBLIC_URL') !== undefined,
      bodyLimit: int(env, 'HTTP_BODY_LIMIT', 64 * 1024, 1024),
      profileBodyLimit: 10 * 1024 * 1024,
    },
    supervisorStream: {
      maxBufferedBytes: int(env, 'SUPERVISOR_STREAM_BUFFER_BYTES', 1024 * 1024, 4096),
      heartbeatMs: int(env, 'SUPERVISOR_STREAM_HEARTBEAT_MS', 15_000, 100),
      metricsIntervalMs: int(env, 'SUPERVISOR_STREAM_METRICS_MS', 5_000, 100),
    },
    database: { url: str(env, 'DATABASE_URL', 'postgres://127.0.0.1:5432/switchboard') },
    redis: {
      url: str(env, 'REDIS_URL', 'redis://127.0.0.1:6379'),
      prefix: str(env, 'REDIS_PREFIX', 'sb'),
      clusterNodes: list(env, 'REDIS_CLUSTER_NODES'),
    },
    admin: {
      email: str(env, 'ADMIN_EMAIL', 'administrator@switchboard.local').toLowerCase(),
      password: optional(env, 'ADMIN_PASSWORD'),
    },
    organization: { defaultDomain: str(env, 'DEFAULT_ORGANIZATION_DOMAIN', 'default.switchboard.local') },
    sip: {
      enabled: bool(env, 'SIP_ENABLED', true),
      host: sipHost,
      port: int(env, 'SIP_PORT', 5080, 0, 65535),
      publicAddress: str(env, 'SIP_PUBLIC_ADDRESS', sipHost),
      udp: bool(env, 'SIP_UDP', true),
      tcp: bool(env, 'SIP_TCP', true),
      wsPort: wsPort === undefined ? null : int(env, 'SIP_WS_PORT', 0, 0, 65535),
      wssPort: wssPort === undefined ? null : int(env, 'SIP_WSS_PORT', 0, 0, 65535),
      tlsCert,
      tlsKey,
      trustedSources: list(env, 'SIP_TRUSTED_SOURCES'),
      registrarMinExpires: int(env, 'SIP_REGISTRAR_MIN_EXPIRES', 60, 1, 86_400),
      registrarMaxExpires: int(env, 'SIP_REGISTRAR_MAX_EXPIRES', 7_200, 1, 604_800),
      outboundProxy: optional(env, 'SIP_OUTBOUND_PROXY') ?? null,
      blockPrivate: bool(env, 'SIP_BLOCK_PRIVATE', false),
      gatewayLeaseMs: int(env, 'GATEWAY_LEASE_MS', 10_000, 1_000, 600_000),
    },
    media: {
      rtpHost: str(env, 'RTP_HOST', sipHost),
      rtpPortMin: int(env, 'RTP_PORT_MIN', 20000, 1024, 65535),
      rtpPortMax: int(env, 'RTP_PORT_MAX', 29999, 1024, 65535),
      cacheDir: str(env, 'MEDIA_CACHE_DIR', join(tmpdir(), 'switchboard-media-cache')),
      cacheMaxBytes: int(env, 'MEDIA_CACHE_MAX_BYTES', 512 * 1024 * 1024, 1024 * 1024),
      maxDownloadBytes: int(env, 'MEDIA_MAX_DOWNLOAD_BYTES', 50 * 1024 * 1024, 1024),
      webrtcPublicAddresses: ipv4List(env, 'WEBRTC_PUBLIC_ADDRESS'),
      webrtcCodecs: webrtcCodecs(env),
    },
    mediaEngineNodeArgs: (optional(env, 'MEDIA_ENGINE_NODE_ARGS') ?? '').split(/\s+/).filter(Boolean),
    ussd: {
      gatewayUri: optional(env, 'USSD_GATEWAY_URI') ?? null,
      gatewayUser: optional(env, 'USSD_GATEWAY_USER') ?? null,
      gatewayPassword: optional(env, 'USSD_GATEWAY_PASSWORD') ?? null,
    },
    recordings: { dir: str(env, 'RECORDINGS_DIR', join(process.cwd(), '.data', 'recordings')) },
    numbers: { pool: list(env, 'NUMBER_POOL'), callerIdPolicy: callerIdPolicy(env) },
    smpp: { urls: list(env, 'SMPP_URL'), leaseMs: int(env, 'SMS_LEASE_MS', 10_000, 500, 600_000) },
    smtp: { url: optional(env, 'SMTP_URL') ?? null, from: optional(env, 'SMTP_FROM') ?? null },
    metrics: { token: optional(env, 'METRICS_TOKEN') ?? null },
    webhooks: {
      blockPrivate: bool(env, 'WEBHOOK_BLOCK_PRIVATE', false),
      connectTimeoutMs: int(env, 'WEBHOOK_CONNECT_TIMEOUT_MS', 5000, 100, 60000),
      totalTimeoutMs: int(env, 'WEBHOOK_TOTAL_TIMEOUT_MS', 15000, 100, 120000),
      retries: int(env, 'WEBHOOK_RETRIES', 1, 0, 5),
    },
    auth: {
      identityFailures: int(env, 'AUTH_MAX_FAILURES_PER_IDENTITY', 10, 1),
      sourceFailures: int(env, 'AUTH_MAX_FAILURES_PER_IP', 50, 1),
      windowMs: int(env, 'AUTH_FAILURE_WINDOW_SECONDS', 300, 1, 86_400) * 1000,
      verifyConcurrency: int(env, 'AUTH_VERIFY_CONCURRENCY', 2, 1, 64),
      verifyQueue: int(env, 'AUTH_VERIFY_QUEUE', 32, 0, 10_000),
      cacheMs: int(env, 'AUTH_CACHE_SECONDS', 30, 0, 3600) * 1000,
      tarpitMs: int(env, 'AUTH_TARPIT_MS', 1000, 0, 10_000),
    },
    limits: {
      callsPerSecondPerAccount: int(env, 'ACCOUNT_CPS', 10, 1),
      concurrentCallsPerAccount: int(env, 'ACCOUNT_MAX_CONCURRENT_CALLS', 1000, 1),
      callLeaseMs: int(env, 'CALL_LEASE_SECONDS', 30, 3, 3600) * 1000,
    },
  };
  // Via, Contact and SDP carry it: a value no SIP URI can hold would fail every call, not the start.
  try {
    formatSipAddress(undefined, config.sip.publicAddress);
  } catch (e) {
    if (!(e instanceof SipUriError)) throw e;
    throw new ConfigError(`SIP_PUBLIC_ADDRESS must be a host name or an IP address (${e.reason})`);
  }
  // Peers and the other nodes reach this node at that address (Via, Contact, the node that holds a
  // client's connection, docs/cluster.md): a wildcard names no host.
  if (UNSPECIFIED_ADDRESSES.has(config.sip.publicAddress.replace(/^\[|\]$/g, '')))
    throw new ConfigError(
      'SIP_PUBLIC_ADDRESS must name this node (set it when SIP_HOST is a wildcard such as 0.0.0.0)',
    );
  if (config.ussd.gatewayUri !== null) {
    try {
      parseHostOrSipUri(config.ussd.gatewayUri);
    } catch (e) {
      if (!(e instanceof SipUriError)) throw e;
      throw new ConfigError(`USSD_GATEWAY_URI must be host[:port] or a sip: URI (${e.reason})`);
    }
  }
  if (config.media.rtpPortMin > config.media.rtpPortMax) {
    throw new ConfigError('RTP_PORT_MIN must not be greater than RTP_PORT_MAX');
  }
  for (const url of [config.database.url, config.redis.url]) {
    try {
      new URL(url);
    } catch {
      throw new ConfigError(`not a URL: ${redactUrl(url)}`);
    }
  }
  for (const node of config.redis.clusterNodes) {
    if (!/^[^\s:/@]+:\d{1,5}$|^\[[0-9a-fA-F:.]+\]:\d{1,5}$/.test(node)) {
      throw new ConfigError(`REDIS_CLUSTER_NODES must list host:port entries, not ${JSON.stringify(node)}`);
    }
  }
  // --- Messaging: a bad SMPP_URL or SMTP_URL stops the start with one clear line ---
  config.smpp.urls.forEach((url, i) => {
    try {
      parseSmppUrl(url);
    } catch (e) {
      throw new ConfigError(`${(e as Error).message} (entry ${i + 1} of SMPP_URL: ${redactUrl(url)})`);
    }
  });
  if (config.smtp.url !== null) {
    let protocol = '';
    try {
      protocol = new URL(config.smtp.url).protocol;
    } catch {
      throw new ConfigError(`SMTP_URL is not a URL: ${redactUrl(config.smtp.url)}`);
    }
    if (protocol !== 'smtp:' && protocol !== 'smtps:') {
      throw new ConfigError('SMTP_URL scheme must be smtp: or smtps:');
    }
  }
  // --- end messaging ---
  return deepFreeze(config);
}

/** A URL with its password replaced, for log lines and error messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
  }
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
