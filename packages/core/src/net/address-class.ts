/**
 * What kind of address an `http` task would connect to (pure: no DNS, no sockets). The worker
 * refuses the non-public classes unless `AX_HTTP_EXECUTOR_ALLOW` names them (host-allow.ts).
 *
 * - `loopback` 127.0.0.0/8, ::1 · `unspecified` 0.0.0.0/8, :: (0.0.0.0 reaches this host)
 * - `link-local` 169.254.0.0/16, fe80::/10 · `private` 10/8, 172.16/12, 192.168/16, fc00::/7,
 *   fec0::/10 · `shared` 100.64.0.0/10 (carrier-grade NAT, RFC 6598)
 * - `reserved` multicast, 240/4 and broadcast, IETF and documentation/benchmark ranges,
 *   unassigned IPv6 outside 2000::/3, Teredo, the deprecated IPv4-compatible ::a.b.c.d
 * - `public` the rest.
 *
 * IPv6 forms that reach an IPv4 address are classified as that address: mapped
 * `::ffff:a.b.c.d`, SIIT `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96` and 6to4 `2002::/16`.
 * Cloud metadata endpoints are recognised separately (`isMetadataAddress`): they are refused
 * even for names marked internal.
 */

/** An IPv4 (32-bit) or IPv6 (128-bit) address as a number. */
export interface IpAddress {
  readonly version: 4 | 6;
  readonly value: bigint;
}

/** The class of an address (see the module comment). */
export type AddressClass = 'public' | 'loopback' | 'unspecified' | 'link-local' | 'private' | 'shared' | 'reserved';

/** An address range: `value` with the low `bits - prefix` bits zero. */
export interface Cidr {
  readonly version: 4 | 6;
  readonly value: bigint;
  readonly prefix: number;
}

const V4_OCTET = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

function parseIpv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => V4_OCTET.test(p))) return undefined;
  return parts.reduce((acc, p) => (acc << 8n) | BigInt(Number(p)), 0n);
}

function parseIpv6(text: string): bigint | undefined {
  let groups: string[];
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] === '' ? [] : (halves[0] ?? '').split(':');
  const tail = halves.length === 2 ? (halves[1] === '' ? [] : (halves[1] ?? '').split(':')) : [];
  // An IPv4 tail (`::ffff:1.2.3.4`) is two groups.
  const last = halves.length === 2 ? tail : head;
  const v4Text = last.at(-1);
  let v4: bigint | undefined;
  if (v4Text?.includes('.')) {
    v4 = parseIpv4(v4Text);
    if (v4 === undefined) return undefined;
    last.pop();
  }
  const v4Groups = v4 === undefined ? [] : [((v4 >> 16n) & 0xffffn).toString(16), (v4 & 0xffffn).toString(16)];
  if (halves.length === 2) {
    const missing = 8 - head.length - tail.length - v4Groups.length;
    if (missing < 1) return undefined;
    groups = [...head, ...Array<string>(missing).fill('0'), ...tail, ...v4Groups];
  } else {
    groups = [...head, ...v4Groups];
  }
  if (groups.length !== 8 || !groups.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return undefined;
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** Parses a literal address (`10.1.2.3`, `::1`, `fe80::1%eth0`); undefined for anything else. */
export function parseIp(text: string): IpAddress | undefined {
  if (text.includes(':')) {
    const value = parseIpv6(text.replace(/%[^%]+$/, ''));
    return value === undefined ? undefined : { version: 6, value };
  }
  const value = parseIpv4(text);
  return value === undefined ? undefined : { version: 4, value };
}

/** `::ffff:a.b.c.d` → `a.b.c.d`; anything else unchanged. The form matching and classes use. */
export function unmapped(ip: IpAddress): IpAddress {
  return ip.version === 6 && ip.value >> 32n === 0xffffn ? { version: 4, value: ip.value & 0xffff_ffffn } : ip;
}

function v4(a: number, b: number, c: number, d: number): bigint {
  return (BigInt(a) << 24n) | (BigInt(b) << 16n) | (BigInt(c) << 8n) | BigInt(d);
}

function v6(text: string): bigint {
  const value = parseIpv6(text);
  if (value === undefined) throw new Error(`bad IPv6 constant ${text}`);
  return value;
}

type Range = readonly [base: bigint, prefix: number, cls: AddressClass];

const V4_RANGES: readonly Range[] = [
  [v4(0, 0, 0, 0), 8, 'unspecified'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'shared'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link-local'],
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'reserved'],
  [v4(192, 0, 2, 0), 24, 'reserved'],
  [v4(192, 88, 99, 0), 24, 'reserved'],
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(198, 18, 0, 0), 15, 'reserved'],
  [v4(198, 51, 100, 0), 24, 'reserved'],
  [v4(203, 0, 113, 0), 24, 'reserved'],
  [v4(224, 0, 0, 0), 4, 'reserved'],
  [v4(240, 0, 0, 0), 4, 'reserved'],
];

const V6_RANGES: readonly Range[] = [
  [v6('64:ff9b:1::'), 48, 'private'], // local-use NAT64 (RFC 8215)
  [v6('100::'), 64, 'reserved'], // discard
  [v6('2001::'), 32, 'reserved'], // Teredo
  [v6('2001:db8::'), 32, 'reserved'], // documentation
  [v6('fc00::'), 7, 'private'],
  [v6('fe80::'), 10, 'link-local'],
  [v6('fec0::'), 10, 'private'], // deprecated site-local
  [v6('ff00::'), 8, 'reserved'],
];

function inRange(value: bigint, bits: number, base: bigint, prefix: number): boolean {
  const shift = BigInt(bits - prefix);
  return value >> shift === base >> shift;
}

function classifyV4(value: bigint): AddressClass {
  for (const [base, prefix, cls] of V4_RANGES) if (inRange(value, 32, base, prefix)) return cls;
  return 'public';
}

/** The IPv4 address an IPv6 address reaches through a translation prefix, if any. */
function embeddedV4(value: bigint): bigint | undefined {
  if (value >> 32n === 0xffff_0000n) return value & 0xffff_ffffn; // ::ffff:0:a.b.c.d (SIIT)
  if (value >> 32n === v6('64:ff9b::') >> 32n) return value & 0xffff_ffffn; // NAT64
  if (value >> 112n === 0x2002n) return (value >> 80n) & 0xffff_ffffn; // 6to4
  return undefined;
}

/** The class of an address (mapped IPv6 counts as the IPv4 address it names). */
export function classifyAddress(address: IpAddress): AddressClass {
  const ip = unmapped(address);
  if (ip.version === 4) return classifyV4(ip.value);
  if (ip.value === 0n) return 'unspecified';
  if (ip.value === 1n) return 'loopback';
  if (ip.value >> 32n === 0n) return 'reserved'; // ::a.b.c.d, deprecated IPv4-compatible
  const inner = embeddedV4(ip.value);
  if (inner !== undefined) return classifyV4(inner);
  for (const [base, prefix, cls] of V6_RANGES) if (inRange(ip.value, 128, base, prefix)) return cls;
  return inRange(ip.value, 128, v6('2000::'), 3) ? 'public' : 'reserved';
}

/**
 * Cloud metadata endpoints: AWS (169.254.169.254, fd00:ec2::254; ECS 169.254.170.2; EKS pod
 * identity 169.254.170.23, fd00:ec2::23), GCP, Azure, OpenStack, DigitalOcean, Oracle
 * (169.254.169.254), Azure's wire server 168.63.129.16, Alibaba Cloud 100.100.100.200.
 */
const METADATA: ReadonlySet<string> = new Set(
  [v4(169, 254, 169, 254), v4(169, 254, 170, 2), v4(169, 254, 170, 23), v4(168, 63, 129, 16), v4(100, 100, 100, 200)]
    .map((value) => `4:${value}`)
    .concat([v6('fd00:ec2::254'), v6('fd00:ec2::23')].map((value) => `6:${value}`)),
);

/** Whether an address is a cloud metadata endpoint, in any form (mapped too). */
export function isMetadataAddress(address: IpAddress): boolean {
  const ip = unmapped(address);
  const inner = ip.version === 6 ? embeddedV4(ip.value) : undefined;
  return METADATA.has(`${ip.version}:${ip.value}`) || (inner !== undefined && METADATA.has(`4:${inner}`));
}

/** How a refusal names the address: its class, `, cloud metadata` added for those. */
export function addressLabel(address: IpAddress): string {
  const cls = classifyAddress(address);
  if (!isMetadataAddress(address)) return cls;
  return cls === 'public' ? 'cloud metadata' : `${cls}, cloud metadata`;
}

/**
 * Parses `a.b.c.d/n`, `v6/n` or a bare address (a /32 or /128). Host bits must be zero
 * (`10.1.2.0/24`, not `10.1.2.3/24`); a mapped IPv6 range of /96 or longer is an IPv4 range.
 */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  const ip = parseIp(slash === -1 ? text : text.slice(0, slash));
  if (ip === undefined || text.includes('%')) return undefined;
  const bits = ip.version === 4 ? 32 : 128;
  let prefix = bits;
  if (slash !== -1) {
    const digits = text.slice(slash + 1);
    if (!/^(0|[1-9]\d{0,2})$/.test(digits)) return undefined;
    prefix = Number(digits);
    if (prefix > bits) return undefined;
  }
  const hostMask = (1n << BigInt(bits - prefix)) - 1n;
  if ((ip.value & hostMask) !== 0n) return undefined;
  if (ip.version === 6 && prefix >= 96 && ip.value >> 32n === 0xffffn) {
    return { version: 4, value: ip.value & 0xffff_ffffn, prefix: prefix - 96 };
  }
  return { version: ip.version, value: ip.value, prefix };
}

/** Whether a range contains an address (mapped IPv6 compared as IPv4). */
export function cidrContains(cidr: Cidr, address: IpAddress): boolean {
  const ip = unmapped(address);
  if (ip.version !== cidr.version) return false;
  return inRange(ip.value, ip.version === 4 ? 32 : 128, cidr.value, cidr.prefix);
}
