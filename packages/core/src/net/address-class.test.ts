import { describe, expect, it } from 'vitest';
import { addressLabel, classifyAddress, cidrContains, isMetadataAddress, parseCidr, parseIp } from './address-class.js';

function classOf(text: string): string {
  const ip = parseIp(text);
  if (ip === undefined) throw new Error(`not an address: ${text}`);
  return classifyAddress(ip);
}

describe('address classes (the address an http task connects to)', () => {
  it('IPv4: loopback, private, link-local, unspecified, shared, reserved and public', () => {
    expect(classOf('127.0.0.1')).toBe('loopback');
    expect(classOf('127.255.1.2')).toBe('loopback');
    expect(classOf('10.0.0.1')).toBe('private');
    expect(classOf('172.16.0.1')).toBe('private');
    expect(classOf('172.31.255.255')).toBe('private');
    expect(classOf('172.32.0.1')).toBe('public');
    expect(classOf('172.15.255.255')).toBe('public');
    expect(classOf('192.168.1.1')).toBe('private');
    expect(classOf('169.254.169.254')).toBe('link-local');
    expect(classOf('169.254.0.1')).toBe('link-local');
    expect(classOf('0.0.0.0')).toBe('unspecified');
    expect(classOf('0.1.2.3')).toBe('unspecified');
    expect(classOf('100.64.0.1')).toBe('shared');
    expect(classOf('100.100.100.200')).toBe('shared');
    expect(classOf('100.128.0.1')).toBe('public');
    expect(classOf('224.0.0.1')).toBe('reserved');
    expect(classOf('255.255.255.255')).toBe('reserved');
    expect(classOf('192.0.2.10')).toBe('reserved');
    expect(classOf('8.8.8.8')).toBe('public');
    expect(classOf('93.184.216.34')).toBe('public');
  });

  it('IPv6: ::1, ::, fe80::/10, fc00::/7, multicast, documentation and global unicast', () => {
    expect(classOf('::1')).toBe('loopback');
    expect(classOf('0:0:0:0:0:0:0:1')).toBe('loopback');
    expect(classOf('::')).toBe('unspecified');
    expect(classOf('fe80::1')).toBe('link-local');
    expect(classOf('febf::1')).toBe('link-local');
    expect(classOf('fe80::1%eth0')).toBe('link-local');
    expect(classOf('fc00::1')).toBe('private');
    expect(classOf('fd12:3456::1')).toBe('private');
    expect(classOf('fd00:ec2::254')).toBe('private');
    expect(classOf('ff02::1')).toBe('reserved');
    expect(classOf('2001:db8::1')).toBe('reserved');
    expect(classOf('2606:4700:4700::1111')).toBe('public');
    expect(classOf('2a00:1450:4001:82b::200e')).toBe('public');
  });

  it('IPv4 inside IPv6 (mapped, NAT64, 6to4) is classified as the IPv4 address it reaches', () => {
    expect(classOf('::ffff:127.0.0.1')).toBe('loopback');
    expect(classOf('::ffff:7f00:1')).toBe('loopback');
    expect(classOf('::FFFF:169.254.169.254')).toBe('link-local');
    expect(classOf('::ffff:10.1.2.3')).toBe('private');
    expect(classOf('::ffff:0.0.0.0')).toBe('unspecified');
    expect(classOf('::ffff:8.8.8.8')).toBe('public');
    expect(classOf('64:ff9b::127.0.0.1')).toBe('loopback');
    expect(classOf('64:ff9b::8.8.8.8')).toBe('public');
    expect(classOf('2002:7f00:1::')).toBe('loopback');
    expect(classOf('2002:0808:0808::1')).toBe('public');
    expect(classOf('::127.0.0.1')).toBe('reserved'); // deprecated IPv4-compatible form
  });

  it('cloud metadata addresses are recognised in every form, and labelled so', () => {
    for (const text of ['169.254.169.254', '::ffff:169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200', '168.63.129.16']) {
      expect(isMetadataAddress(parseIp(text)!), text).toBe(true);
    }
    expect(isMetadataAddress(parseIp('169.254.169.253')!)).toBe(false);
    expect(addressLabel(parseIp('169.254.169.254')!)).toBe('link-local, cloud metadata');
    expect(addressLabel(parseIp('168.63.129.16')!)).toBe('cloud metadata');
    expect(addressLabel(parseIp('127.0.0.1')!)).toBe('loopback');
  });

  it('parses only real addresses: no octal, no out-of-range octets, no names', () => {
    for (const bad of ['', 'localhost', '1.2.3', '1.2.3.4.5', '256.0.0.1', '01.2.3.4', '1.2.3.-1', ':::', '1::2::3', '12345::', 'g::1', '::ffff:1.2.3', '1:2:3:4:5:6:7:8:9']) {
      expect(parseIp(bad), bad).toBeUndefined();
    }
    expect(parseIp('1:2:3:4:5:6:7:8')).toEqual({ version: 6, value: 0x0001_0002_0003_0004_0005_0006_0007_0008n });
    expect(parseIp('10.1.2.3')).toEqual({ version: 4, value: 0x0a010203n });
  });

  it('CIDR: contains what its prefix covers, a bare address is a /32 or /128, mapped IPv6 matches IPv4 ranges', () => {
    const net = parseCidr('10.1.2.0/24')!;
    expect(cidrContains(net, parseIp('10.1.2.200')!)).toBe(true);
    expect(cidrContains(net, parseIp('10.1.3.1')!)).toBe(false);
    expect(cidrContains(net, parseIp('::ffff:10.1.2.7')!)).toBe(true);
    expect(cidrContains(parseCidr('127.0.0.1')!, parseIp('127.0.0.1')!)).toBe(true);
    expect(cidrContains(parseCidr('127.0.0.1')!, parseIp('127.0.0.2')!)).toBe(false);
    expect(cidrContains(parseCidr('0.0.0.0/0')!, parseIp('8.8.8.8')!)).toBe(true);
    expect(cidrContains(parseCidr('0.0.0.0/0')!, parseIp('2606:4700::1')!)).toBe(false);
    expect(cidrContains(parseCidr('fd00::/8')!, parseIp('fd00:ec2::254')!)).toBe(true);
    expect(cidrContains(parseCidr('fd00::/8')!, parseIp('fe80::1')!)).toBe(false);
    expect(cidrContains(parseCidr('::1')!, parseIp('::1')!)).toBe(true);
    expect(cidrContains(parseCidr('::ffff:127.0.0.0/104')!, parseIp('127.9.9.9')!)).toBe(true);
  });

  it('CIDR: refuses bad prefixes and set host bits (say 10.1.2.0/24, not 10.1.2.3/24)', () => {
    for (const bad of ['10.1.2.0/33', '10.1.2.3/24', '10.1.2.0/', '10.1.2.0/024', '::/129', 'fd00::1/8', 'localhost/8']) {
      expect(parseCidr(bad), bad).toBeUndefined();
    }
  });
});
