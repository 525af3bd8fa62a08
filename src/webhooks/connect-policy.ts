/**
 * The SSRF policy at connection time (benchmarks-and-faults R17; rules in src/security/address-policy.ts).
 * IP literals and metadata host names are refused before any connection; host names are resolved by the
 * connector's `lookup` hook, which runs for every new connection, redirect hops included: if any resolved
 * address is blocked the host is refused, else the socket is pinned to the first checked address, so a
 * second resolution cannot rebind the name between check and connect.
 */
import { promises as dns } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { type AddressPolicy, blockedHostReason, blockedReason } from './url-policy.js';

/** Resolves a host name to every address it has (injectable for tests). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

export const defaultResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** Error code of a lookup the policy refused (a BlockedByPolicy failure, not a DNS failure). */
export const POLICY_REFUSED = 'E_WEBHOOK_POLICY';

/** Why `url` may not be contacted before any resolution (metadata host, blocked IP literal), or null. */
export function refusedTarget(url: URL, policy: AddressPolicy): string | null {
  const hostReason = blockedHostReason(url.hostname);
  if (hostReason) return hostReason;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) !== 0 ? blockedReason(host, policy) : null;
}

/** The connector's DNS hook: resolves with `resolver`, refuses per `policy`, pins to the checked address. */
export function policyLookup(resolver: Resolver, policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const done = callback as (
      err: NodeJS.ErrnoException | null,
      address: string | Array<{ address: string; family: number }>,
      family?: number,
    ) => void;
    resolver(hostname).then(
      (addresses) => {
        if (addresses.length === 0) {
          const e: NodeJS.ErrnoException = new Error(`no address for ${hostname}`);
          e.code = 'ENOTFOUND';
          done(e, '');
          return;
        }
        for (const a of addresses) {
          const reason = blockedReason(a.address, policy);
          if (reason) {
            const e: NodeJS.ErrnoException = new Error(`${hostname}: ${reason}`);
            e.code = POLICY_REFUSED;
            done(e, '');
            return;
          }
        }
        const first = addresses[0]!;
        if (options.all) done(null, [{ address: first.address, family: first.family }]);
        else done(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => done(err, ''),
    );
  };
}
