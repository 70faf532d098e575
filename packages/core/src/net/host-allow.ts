/**
 * `AX_HTTP_EXECUTOR_ALLOW`: the hosts an `http` task may call and the addresses they may
 * resolve to (pure; checked-connect.ts resolves, checks with this and connects). Entries,
 * comma-separated, case-insensitive; an entry without `:port` allows every port:
 *
 * - `*` — any host, any address, nothing checked: the development default (docs: never in
 *   production). Listed with other entries it still allows everything.
 * - `host`, `host:port`, `*.domain`, `*.domain:port` (any sub-domain, not the domain itself) —
 *   these names, which must resolve to public addresses only: a name that resolves to a
 *   loopback, private, link-local, shared, unspecified, reserved or cloud metadata address
 *   (address-class.ts) is refused, unless an address entry below covers that address.
 * - `internal:host`, `internal:host:port` — this exact name, which may also resolve to
 *   non-public addresses (an internal service, on purpose); cloud metadata addresses stay
 *   refused for it.
 * - `a.b.c.d`, `a.b.c.d/n`, `[v6]`, `[v6/n]`, each with an optional `:port` — these addresses,
 *   whatever their class (metadata too): a URL may name them directly, and a listed name may
 *   resolve to them. They admit no name by themselves.
 *
 * Every resolved address of a name must pass, or the host is refused.
 */
import { addressLabel, cidrContains, classifyAddress, isMetadataAddress, parseCidr, parseIp, type Cidr, type IpAddress } from './address-class.js';

/** The matcher of an allow list. */
export interface HostAllowList {
  /** `*` is listed: every host and every address, no check. */
  readonly any: boolean;
  /** Whether an entry admits the URL's host and port (checked before any lookup). */
  allowsHost(url: URL): boolean;
  /**
   * Why `address`, which `hostname` resolved to, may not be connected to on `port` (the class,
   * e.g. `loopback` or `link-local, cloud metadata`); undefined when it may.
   */
  refusal(hostname: string, port: string, address: string): string | undefined;
}

interface NameRule {
  readonly kind: 'name';
  /** The exact name, or `.domain` for `*.domain`. */
  readonly host: string;
  readonly wildcard: boolean;
  readonly internal: boolean;
  readonly port: string | undefined;
}

interface AddressRule {
  readonly kind: 'address';
  readonly cidr: Cidr;
  readonly port: string | undefined;
}

type Rule = { readonly kind: 'any' } | NameRule | AddressRule;

const NAME = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;
const INTERNAL = 'internal:';

/** Why the prefix or the address part of an address entry is wrong. */
function addressProblem(text: string): string {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const ip = parseIp(address);
  if (ip === undefined) return `"${address}" is not an IP address`;
  const prefix = slash === -1 ? '' : text.slice(slash + 1);
  const bits = ip.version === 4 ? 32 : 128;
  if (!/^(0|[1-9]\d{0,2})$/.test(prefix) || Number(prefix) > bits) return `"/${prefix}" is not a CIDR prefix of 0 to ${bits}`;
  return `host bits are set in ${text}: write the network address of the range`;
}

function parseRule(raw: string): Rule | string {
  const entry = raw.trim().toLowerCase();
  if (entry === '*') return { kind: 'any' };
  // `internal:8080` is the host `internal` on port 8080, not a mark.
  const internal = entry.startsWith(INTERNAL) && !/^internal:\d+$/.test(entry);
  const rest = internal ? entry.slice(INTERNAL.length) : entry;
  const m = rest.startsWith('[') ? /^\[([^\]]+)\](?::(\d+))?$/.exec(rest) : /^([^:[\]]+)(?::(\d+))?$/.exec(rest);
  if (m === null) return 'not a host, an address or a range, with an optional :port';
  const hostPart = m[1] ?? '';
  const port = m[2];
  if (port !== undefined && (!/^[1-9]\d{0,4}$/.test(port) || Number(port) > 65_535)) return `port ${port} is not 1 to 65535`;
  const isAddress = rest.startsWith('[') || /^\d+\.\d+\.\d+\.\d+(\/.*)?$/.test(hostPart) || hostPart.includes('/');
  if (isAddress) {
    if (internal) return 'internal: marks an exact host name; an address entry already allows its addresses';
    const cidr = parseCidr(hostPart);
    return cidr === undefined ? addressProblem(hostPart) : { kind: 'address', cidr, port };
  }
  if (!NAME.test(hostPart)) return `"${hostPart}" is not a host name`;
  const wildcard = hostPart.startsWith('*.');
  if (internal && wildcard) return 'internal: marks an exact host name, not *.domain';
  return { kind: 'name', host: wildcard ? hostPart.slice(1) : hostPart, wildcard, internal, port };
}

/** What is wrong with one entry, or undefined when it is valid (the worker's config check). */
export function allowEntryProblem(entry: string): string | undefined {
  const rule = parseRule(entry);
  return typeof rule === 'string' ? rule : undefined;
}

/** `[::1]` → `::1`; names lower-cased. */
function bare(hostname: string): string {
  const host = hostname.toLowerCase();
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function portAllows(rulePort: string | undefined, port: string): boolean {
  return rulePort === undefined || rulePort === port;
}

function nameMatches(rule: NameRule, host: string): boolean {
  return rule.wildcard ? host.endsWith(rule.host) && host.length > rule.host.length : host === rule.host;
}

/** Builds the matcher of an allow list; throws on an invalid entry (the config refuses those first). */
export function hostAllowList(entries: readonly string[]): HostAllowList {
  const rules = entries.map((entry) => {
    const rule = parseRule(entry);
    if (typeof rule === 'string') throw new Error(`AX_HTTP_EXECUTOR_ALLOW entry ${JSON.stringify(entry)}: ${rule}`);
    return rule;
  });
  const any = rules.some((rule) => rule.kind === 'any');
  const names = rules.filter((rule): rule is NameRule => rule.kind === 'name');
  const addresses = rules.filter((rule): rule is AddressRule => rule.kind === 'address');
  const addressListed = (address: IpAddress, port: string): boolean =>
    addresses.some((rule) => portAllows(rule.port, port) && cidrContains(rule.cidr, address));

  return {
    any,
    allowsHost(url: URL): boolean {
      if (any) return true;
      const host = bare(url.hostname);
      const port = url.port || (url.protocol === 'https:' ? '443' : '80');
      const ip = parseIp(host);
      if (ip !== undefined) return addressListed(ip, port);
      return names.some((rule) => portAllows(rule.port, port) && nameMatches(rule, host));
    },
    refusal(hostname: string, port: string, address: string): string | undefined {
      if (any) return undefined;
      const ip = parseIp(address);
      if (ip === undefined) return 'not an IP address';
      if (addressListed(ip, port)) return undefined;
      if (isMetadataAddress(ip)) return addressLabel(ip);
      if (classifyAddress(ip) === 'public') return undefined;
      const host = bare(hostname);
      if (names.some((rule) => rule.internal && portAllows(rule.port, port) && rule.host === host)) return undefined;
      return addressLabel(ip);
    },
  };
}

/**
 * What both lists admit: a team's `httpAllow` within the global `AX_HTTP_EXECUTOR_ALLOW`
 * (ADMIN-API.md "Teams"). A team list of `*` narrows nothing; under a global `*` the team's
 * list alone decides, with its address checks.
 */
export function narrowAllowList(global: HostAllowList, team: HostAllowList): HostAllowList {
  if (team.any) return global;
  return {
    any: false,
    allowsHost: (url: URL): boolean => global.allowsHost(url) && team.allowsHost(url),
    refusal: (hostname: string, port: string, address: string): string | undefined => global.refusal(hostname, port, address) ?? team.refusal(hostname, port, address),
  };
}
