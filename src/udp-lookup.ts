/**
 * The address lookup of our UDP sockets (SIP and RTP). An unconnected dgram socket resolves the
 * destination of every send through `dns.lookup`, which answers an IP literal only on the next tick:
 * a deferral, closures and an async scope per datagram. Our destinations are IP literals (a Via's
 * received address, an SDP connection address, a packet's source), so they are answered at once,
 * with what `dns.lookup` would give; a name still goes to it.
 */
import { type LookupOneOptions, lookup } from 'node:dns';
import { isIPv4, isIPv6 } from 'node:net';

export function literalLookup(
  address: string,
  // dgram passes the socket's family as a number (4 or 6), not the options object its type names.
  options: LookupOneOptions | number,
  callback: (err: NodeJS.ErrnoException | null, address: string, family: number) => void,
): void {
  // dns.lookup answers a literal with its own family whatever the family asked (next tick).
  if (isIPv4(address)) callback(null, address, 4);
  else if (isIPv6(address)) callback(null, address, 6);
  else lookup(address, typeof options === 'number' ? { family: options } : options, callback);
}
