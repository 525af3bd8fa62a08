/**
 * Which network addresses the platform may contact on a tenant's behalf: one classification shared
 * by every outgoing path a tenant controls (webhooks and Play URLs, src/webhooks/url-policy.ts;
 * SIP destinations, src/sip/next-hop.ts).
 *
 * Always refused: link-local (169.254.0.0/16, fe80::/10) which holds the cloud metadata services,
 * other metadata addresses (fd00:ec2::254, 100.100.100.200), "this host" (0.0.0.0/8, ::), multicast and
 * broadcast, and metadata host names. Loopback, RFC 1918, CGNAT and ULA ranges are refused only when
 * the path's `blockPrivate` switch is on (`WEBHOOK_BLOCK_PRIVATE`, `SIP_BLOCK_PRIVATE`). IPv4-mapped,
 * IPv4-compatible and NAT64 IPv6 forms are judged as the IPv4 address they carry.
 */
import { BlockList, isIP } from 'node:net';

const ALWAYS = new BlockList();
ALWAYS.addSubnet('169.254.0.0', 16, 'ipv4');
ALWAYS.addSubnet('0.0.0.0', 8, 'ipv4');
ALWAYS.addSubnet('224.0.0.0', 4, 'ipv4');
ALWAYS.addSubnet('240.0.0.0', 4, 'ipv4');
ALWAYS.addAddress('100.100.100.200', 'ipv4');
ALWAYS.addSubnet('fe80::', 10, 'ipv6');
ALWAYS.addSubnet('ff00::', 8, 'ipv6');
ALWAYS.addAddress('fd00:ec2::254', 'ipv6');
ALWAYS.addAddress('::', 'ipv6');

const PRIVATE = new BlockList();
PRIVATE.addSubnet('127.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('10.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('172.16.0.0', 12, 'ipv4');
PRIVATE.addSubnet('192.168.0.0', 16, 'ipv4');
PRIVATE.addSubnet('100.64.0.0', 10, 'ipv4');
PRIVATE.addAddress('::1', 'ipv6');
PRIVATE.addSubnet('fc00::', 7, 'ipv6');

/** Host names that reach metadata services whatever they resolve to. */
const BLOCKED_HOSTS = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
]);

/** The 8 hextets of an IPv6 address, or null. */
function hextets(ip: string): number[] | null {
  let text = ip.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const parts = [...head, ...Array<string>(Math.max(fill, 0)).fill('0'), ...tail];
  if (parts.length !== 8) return null;
  const out = parts.map((h) => Number.parseInt(h, 16));
  return out.some((n) => Number.isNaN(n) || n < 0 || n > 0xffff) ? null : out;
}

/**
 * The IPv4 address embedded in an IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96) or NAT64
 * (64:ff9b::/96) IPv6 address, so such forms are judged as the IPv4 address they reach.
 */
function embeddedIPv4(ip: string): string | null {
  const h = hextets(ip);
  if (!h) return null;
  const [h0, h1, h2, h3, h4, h5, h6, h7] = h as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const zeroPrefix = h1 === 0 && h2 === 0 && h3 === 0 && h4 === 0;
  const mapped = h0 === 0 && zeroPrefix && h5 === 0xffff;
  const compatible = h0 === 0 && zeroPrefix && h5 === 0 && (h6 !== 0 || h7 > 1);
  const nat64 = h0 === 0x64 && h1 === 0xff9b && h2 === 0 && h3 === 0 && h4 === 0 && h5 === 0;
  if (!mapped && !compatible && !nat64) return null;
  return `${h6 >> 8}.${h6 & 0xff}.${h7 >> 8}.${h7 & 0xff}`;
}

export interface AddressPolicy {
  /** Refuse loopback and private ranges too (multi-tenant hosting). */
  readonly blockPrivate: boolean;
}

/**
 * Verdicts of recent addresses, per `blockPrivate`: the same few (the webhook host, the trunk, the
 * peers of live calls) are checked on every request and every SIP send, and a `BlockList` check
 * builds a native `SocketAddress` each time. Bounded; the oldest entry goes first.
 */
const VERDICTS = [new Map<string, string | null>(), new Map<string, string | null>()] as const;
const VERDICTS_MAX = 1024;

/** Why an address is refused, or null when it may be contacted. */
export function blockedReason(address: string, policy: AddressPolicy): string | null {
  const verdicts = VERDICTS[policy.blockPrivate ? 1 : 0];
  const known = verdicts.get(address);
  if (known !== undefined) return known;
  const verdict = classify(address, policy);
  if (verdicts.size >= VERDICTS_MAX) verdicts.delete(verdicts.keys().next().value as string);
  verdicts.set(address, verdict);
  return verdict;
}

function classify(address: string, policy: AddressPolicy): string | null {
  let ip = address;
  let family = isIP(ip);
  if (family === 0) return `not an IP address: ${address}`;
  // IPv4-mapped, IPv4-compatible and NAT64 IPv6 forms are judged as the IPv4 address they carry.
  const embedded = family === 6 ? embeddedIPv4(ip) : null;
  if (embedded) {
    ip = embedded;
    family = 4;
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (ALWAYS.check(ip, type)) return `address ${address} is link-local, metadata or reserved`;
  if (policy.blockPrivate && PRIVATE.check(ip, type)) return `address ${address} is loopback or private`;
  return null;
}

/** Why a host name is refused before resolution, or null. */
export function blockedHostReason(hostname: string): string | null {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (BLOCKED_HOSTS.has(h)) return `host ${hostname} is a metadata service`;
  return null;
}
