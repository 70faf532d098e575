/** Whom the limiter counts: trusted proxies and X-Forwarded-For (pure). */
import { describe, expect, it } from 'vitest';
import { loadConfigOrExit } from '@ax/kit';
import { NO_TRUSTED_PROXIES, normalizeAddress, parseTrustedProxies, resolveClientAddress, trustedProxiesField, type TrustedProxies } from './client-address.js';

function trusted(list: string): TrustedProxies {
  const parsed = parseTrustedProxies(list);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.value;
}

describe('resolveClientAddress', () => {
  it('is the socket peer when no proxy is trusted, whatever X-Forwarded-For says', () => {
    expect(resolveClientAddress('192.0.2.9', '203.0.113.5', NO_TRUSTED_PROXIES)).toBe('192.0.2.9');
  });

  it('is the socket peer when the peer is not a trusted proxy', () => {
    expect(resolveClientAddress('192.0.2.9', '203.0.113.5', trusted('10.0.0.0/8'))).toBe('192.0.2.9');
  });

  it('behind a trusted proxy is the right-most X-Forwarded-For address that is not a trusted proxy', () => {
    const proxies = trusted('10.0.0.0/8, 2001:db8::/32');
    expect(resolveClientAddress('10.0.0.1', '203.0.113.5', proxies)).toBe('203.0.113.5');
    // Entries left of the client were written by the client: a spoof changes nothing.
    expect(resolveClientAddress('10.0.0.1', '1.1.1.1, 203.0.113.5', proxies)).toBe('203.0.113.5');
    // Two proxies in a row.
    expect(resolveClientAddress('10.0.0.1', '1.1.1.1, 203.0.113.5, 10.9.9.9', proxies)).toBe('203.0.113.5');
    expect(resolveClientAddress('2001:db8::7', '2001:DB8::8, [2001:db9::1]:443', proxies)).toBe('2001:db9::1');
  });

  it('behind a trusted proxy without X-Forwarded-For is the proxy', () => {
    expect(resolveClientAddress('10.0.0.1', undefined, trusted('10.0.0.0/8'))).toBe('10.0.0.1');
  });

  it('stops at the trusted hop right of an unparseable entry, and at the left-most when all are trusted', () => {
    const proxies = trusted('10.0.0.0/8');
    expect(resolveClientAddress('10.0.0.1', '203.0.113.5, unknown, 10.0.0.2', proxies)).toBe('10.0.0.2');
    expect(resolveClientAddress('10.0.0.1', '10.0.0.3, 10.0.0.2', proxies)).toBe('10.0.0.3');
  });

  it('treats an IPv4-mapped IPv6 peer as its IPv4 address', () => {
    expect(resolveClientAddress('::ffff:10.0.0.1', '203.0.113.5', trusted('10.0.0.1'))).toBe('203.0.113.5');
    expect(resolveClientAddress('::ffff:192.0.2.9', undefined, NO_TRUSTED_PROXIES)).toBe('192.0.2.9');
  });
});

describe('normalizeAddress', () => {
  it('accepts the forms proxies write and refuses the rest', () => {
    expect(normalizeAddress(' 192.0.2.1:5678 ')).toBe('192.0.2.1');
    expect(normalizeAddress('[2001:DB8::1]:443')).toBe('2001:db8::1');
    expect(normalizeAddress('fe80::1%eth0')).toBe('fe80::1');
    expect(normalizeAddress('0:0:0:0:0:ffff:192.0.2.1')).toBe('192.0.2.1');
    for (const bad of ['unknown', '', '300.1.1.1', 'example.com', '_hidden']) expect(normalizeAddress(bad), bad).toBeNull();
  });
});

describe('AX_TRUSTED_PROXIES', () => {
  it('parses addresses and CIDR ranges of both families', () => {
    const proxies = trusted(' 10.0.0.0/8 ,192.0.2.7,, fd00::/8, ::1, 2001:1234::/32 ');
    expect(proxies.entries).toEqual(['10.0.0.0/8', '192.0.2.7', 'fd00::/8', '::1', '2001:1234::/32']);
    for (const yes of ['10.200.0.1', '192.0.2.7', 'fd12::1', '::1', '2001:1234:5::1']) expect(proxies.has(yes), yes).toBe(true);
    for (const no of ['11.0.0.1', '192.0.2.8', 'fe00::1', '::2', 'garbage']) expect(proxies.has(no), no).toBe(false);
  });

  it('defaults to none', () => {
    const config = loadConfigOrExit({ trustedProxies: trustedProxiesField() }, {});
    expect(config.trustedProxies.entries).toEqual([]);
    expect(config.trustedProxies.has('127.0.0.1')).toBe(false);
  });

  it('stops start-up with one line naming the variable for a bad value', () => {
    for (const bad of ['10.0.0.0/33', 'proxy.internal', '10.0.0.1:8080', '::1/129', '10.0.0.0/-1', '10.0.0.0/']) {
      const lines: string[] = [];
      let code: number | undefined;
      expect(() =>
        loadConfigOrExit({ trustedProxies: trustedProxiesField() }, { AX_TRUSTED_PROXIES: `192.0.2.1, ${bad}` }, {
          writeError: (line) => lines.push(line),
          exit: (c) => void (code = c),
        }),
      ).toThrow();
      expect(code, bad).toBe(2);
      expect(lines, bad).toEqual([
        `ax: AX_TRUSTED_PROXIES=${JSON.stringify(`192.0.2.1, ${bad}`)} is invalid: expected a comma-separated list of IP addresses and CIDR ranges such as 10.0.0.0/8, 192.0.2.7, fd00::/8 (bad item ${JSON.stringify(bad)})\n`,
      ]);
    }
  });
});
