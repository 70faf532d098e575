/**
 * Who the client of a request is, for the failed-login limiter (pure: no I/O, no clock).
 *
 * The client is the socket's peer, unless the peer is one of `AX_TRUSTED_PROXIES`: then
 * `X-Forwarded-For` is read from the right (each proxy appends the address it received the
 * request from) and the first address that is not a trusted proxy is the client. Entries left of
 * it were written by the client and are ignored, so a client cannot choose its own address.
 */
import { BlockList, isIP } from 'node:net';
import { z } from 'zod';
import type { EnvField } from '@ax/kit';

/** The trusted proxies: addresses and CIDR ranges. */
export interface TrustedProxies {
  /** The entries as configured (normalized), e.g. `["10.0.0.0/8", "::1"]`. */
  readonly entries: readonly string[];
  /** Whether `address` (a normalized IP address) is a trusted proxy. */
  has(address: string): boolean;
}

/** No trusted proxies (the default): `X-Forwarded-For` is never read. */
export const NO_TRUSTED_PROXIES: TrustedProxies = Object.freeze({ entries: Object.freeze([]), has: () => false });

/**
 * An IP address in the form used as a limiter key, or null when `raw` is not one. Accepts what
 * proxies write into `X-Forwarded-For`: `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1`, `[2001:db8::1]`,
 * `[2001:db8::1]:443`. IPv4-mapped IPv6 (`::ffff:1.2.3.4`, as a dual-stack socket reports an
 * IPv4 peer) becomes the IPv4 address; IPv6 is lower-cased without a zone (`%eth0`).
 */
export function normalizeAddress(raw: string): string | null {
  let s = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(s);
  if (bracketed !== null) s = bracketed[1] as string;
  else if (/^\d{1,3}(?:\.\d{1,3}){3}:\d{1,5}$/.test(s)) s = s.slice(0, s.indexOf(':'));
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const family = isIP(s);
  if (family === 4) return s;
  if (family !== 6) return null;
  s = s.toLowerCase();
  const mapped = /^(?:::|(?:0{1,4}:){5})ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(s);
  return mapped !== null && isIP(mapped[1] as string) === 4 ? (mapped[1] as string) : s;
}

/**
 * The client address of a request whose socket peer is `peer` and whose `X-Forwarded-For`
 * header (all of its lines, comma-joined) is `forwardedFor`. An unparseable entry ends the walk
 * at the trusted proxy right of it; when every entry is a trusted proxy, the left-most is the
 * client.
 */
export function resolveClientAddress(peer: string | undefined, forwardedFor: string | undefined, trusted: TrustedProxies): string {
  const socketAddress = peer === undefined ? null : normalizeAddress(peer);
  if (socketAddress === null) return peer ?? 'unknown';
  let client = socketAddress;
  if (forwardedFor === undefined || !trusted.has(client)) return client;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalizeAddress(hops[i] as string);
    if (hop === null) return client;
    client = hop;
    if (!trusted.has(hop)) return hop;
  }
  return client;
}

/**
 * Parses a comma-separated list of IP addresses and CIDR ranges (`10.0.0.0/8`, `192.0.2.7`,
 * `fd00::/8`, `::1`); blanks and empty items are dropped.
 */
export function parseTrustedProxies(raw: string): { ok: true; value: TrustedProxies } | { ok: false; problem: string } {
  const items = [...new Set(raw.split(',').map((s) => s.trim()).filter((s) => s !== ''))];
  if (items.length === 0) return { ok: true, value: NO_TRUSTED_PROXIES };
  const list = new BlockList();
  const entries: string[] = [];
  for (const item of items) {
    const slash = item.indexOf('/');
    const address = normalizeAddress(slash < 0 ? item : item.slice(0, slash));
    // Only bare addresses: a port or brackets make no sense here.
    if (address === null || /[[\]]|^\d{1,3}(?:\.\d{1,3}){3}:/.test(item)) return { ok: false, problem: `bad item ${JSON.stringify(item)}` };
    const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (slash < 0) {
      list.addAddress(address, family);
      entries.push(address);
      continue;
    }
    const prefixText = item.slice(slash + 1);
    const prefix = Number(prefixText);
    const maxPrefix = family === 'ipv4' ? 32 : 128;
    if (!/^\d{1,3}$/.test(prefixText) || prefix > maxPrefix) return { ok: false, problem: `bad item ${JSON.stringify(item)}` };
    list.addSubnet(address, prefix, family);
    entries.push(`${address}/${prefix}`);
  }
  return {
    ok: true,
    value: Object.freeze({
      entries: Object.freeze(entries),
      has: (address: string) => {
        const family = isIP(address);
        return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
      },
    }),
  };
}

const EXPECTED = 'a comma-separated list of IP addresses and CIDR ranges such as 10.0.0.0/8, 192.0.2.7, fd00::/8';

/**
 * `AX_TRUSTED_PROXIES` — the reverse proxies (ingress, load balancer) whose `X-Forwarded-For`
 * names the client, as IP addresses and CIDR ranges. Default: none (the socket peer is the client).
 */
export function trustedProxiesField(): EnvField<TrustedProxies> {
  return {
    env: 'AX_TRUSTED_PROXIES',
    expected: EXPECTED,
    sensitivity: 'public',
    schema: () =>
      z
        .string()
        .optional()
        .transform((raw, ctx): TrustedProxies => {
          if (raw === undefined) return NO_TRUSTED_PROXIES;
          const parsed = parseTrustedProxies(raw);
          if (parsed.ok) return parsed.value;
          ctx.addIssue({ code: 'custom', message: `expected ${EXPECTED} (${parsed.problem})` });
          return z.NEVER;
        }),
  };
}
