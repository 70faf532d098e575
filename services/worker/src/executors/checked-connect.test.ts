import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Agent, request, type buildConnector } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkedConnector, HostRefusedError, type HostLookup } from './checked-connect.js';
import { hostAllowList } from './host-allow.js';

/** Answers from a script, one list per call, counting the calls. */
function scriptedLookup(...answers: string[][]): HostLookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = (hostname: string): Promise<Array<{ address: string; family: number }>> => {
    calls.push(hostname);
    const answer = answers[Math.min(calls.length, answers.length) - 1] ?? [];
    return Promise.resolve(answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
  return Object.assign(lookup, { calls });
}

/** A connector that records what it was asked to dial and fails every dial (nothing is reached). */
function recordingDialer(): buildConnector.connector & { dialled: buildConnector.Options[] } {
  const dialled: buildConnector.Options[] = [];
  const dial = (options: buildConnector.Options, callback: buildConnector.Callback): void => {
    dialled.push(options);
    callback(Object.assign(new Error('recorded, not dialled'), { code: 'ECONNREFUSED' }), null);
  };
  return Object.assign(dial, { dialled });
}

function connectOnce(connector: buildConnector.connector, options: buildConnector.Options): Promise<Error | null> {
  return new Promise((resolve) => connector(options, (...result) => resolve(result[0])));
}

describe('checked connector: the address checked is the address dialled', () => {
  it('a DNS answer that turns from public to loopback after the check cannot move the connection: one lookup, the public address is dialled by address with the original name as servername', async () => {
    const lookup = scriptedLookup(['93.184.216.34'], ['127.0.0.1']);
    const dialer = recordingDialer();
    const connector = checkedConnector({ allow: hostAllowList(['svc.example']), lookup, dial: dialer });
    await connectOnce(connector, { hostname: 'svc.example', host: 'svc.example', protocol: 'https:', port: '' });
    expect(lookup.calls).toEqual(['svc.example']);
    expect(dialer.dialled).toEqual([expect.objectContaining({ hostname: '93.184.216.34', servername: 'svc.example', host: 'svc.example', port: '' })]);

    // The next connection resolves again (once), sees loopback, and dials nothing.
    const error = await connectOnce(connector, { hostname: 'svc.example', host: 'svc.example', protocol: 'https:', port: '' });
    expect(error).toBeInstanceOf(HostRefusedError);
    expect(error?.message).toBe('HOST_REFUSED: svc.example resolves to 127.0.0.1 (loopback)');
    expect(lookup.calls).toEqual(['svc.example', 'svc.example']);
    expect(dialer.dialled).toHaveLength(1);
  });

  it('one refused address among several refuses the host (no silent pick of the "good" one)', async () => {
    const dialer = recordingDialer();
    const connector = checkedConnector({ allow: hostAllowList(['svc.example']), lookup: scriptedLookup(['93.184.216.34', '169.254.169.254']), dial: dialer });
    const error = await connectOnce(connector, { hostname: 'svc.example', host: 'svc.example:8080', protocol: 'http:', port: '8080' });
    expect(error?.message).toBe('HOST_REFUSED: svc.example resolves to 169.254.169.254 (link-local, cloud metadata)');
    expect(dialer.dialled).toHaveLength(0);
  });

  it('tries the checked addresses in order when one does not answer, and only those', async () => {
    const dialer = recordingDialer();
    const connector = checkedConnector({ allow: hostAllowList(['svc.example']), lookup: scriptedLookup(['2606:4700::1', '93.184.216.34']), dial: dialer });
    const error = await connectOnce(connector, { hostname: 'svc.example', host: 'svc.example', protocol: 'http:', port: '' });
    expect((error as { code?: string } | null)?.code).toBe('ECONNREFUSED');
    expect(dialer.dialled.map((o) => o.hostname)).toEqual(['2606:4700::1', '93.184.216.34']);
  });

  it('an address host is checked without a lookup', async () => {
    const lookup = scriptedLookup(['93.184.216.34']);
    const dialer = recordingDialer();
    const connector = checkedConnector({ allow: hostAllowList(['10.1.2.0/24']), lookup, dial: dialer });
    await connectOnce(connector, { hostname: '10.1.2.3', host: '10.1.2.3', protocol: 'http:', port: '' });
    expect(lookup.calls).toEqual([]);
    expect(dialer.dialled.map((o) => [o.hostname, o.servername])).toEqual([['10.1.2.3', undefined]]);
  });
});

// A self-signed certificate for the name svc.test (EC P-256, valid 2020–2129).
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgp9Nhm+ay1CD8ocA3
sMWr24HxAxWXElf+p15pFMBegayhRANCAATiXSOgzHbZeOV2rv4DfdDVMz+mTv8r
Ga+NETlVQ8zlmlLmxAcLsv1BX+1c5/Ci3iAGwnWcxcSaWgXoKzk4Y/rG
-----END PRIVATE KEY-----
`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIBkjCCATigAwIBAgIUHAe/7FtHDo7RE263shpEbG/biWgwCgYIKoZIzj0EAwIw
EzERMA8GA1UEAwwIc3ZjLnRlc3QwIBcNMjAwMTAxMDAwMDAwWhgPMjEyOTA3MDgw
MDAwMDBaMBMxETAPBgNVBAMMCHN2Yy50ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAE4l0joMx22Xjldq7+A33Q1TM/pk7/KxmvjRE5VUPM5ZpS5sQHC7L9QV/t
XOfwot4gBsJ1nMXEmloF6Cs5OGP6xqNoMGYwHQYDVR0OBBYEFOFv+UvViFhzmHCX
3kU4VFOtNdj9MB8GA1UdIwQYMBaAFOFv+UvViFhzmHCX3kU4VFOtNdj9MA8GA1Ud
EwEB/wQFMAMBAf8wEwYDVR0RBAwwCoIIc3ZjLnRlc3QwCgYIKoZIzj0EAwIDSAAw
RQIhAOT+u9KiW/eKQmsd1VAq1o/wkVrkEFCWzr2JJU1buSXAAiBZ3dW8bCCatp5n
mraDGfSCI+IpaR5/Iwy7TVoXCOjBnQ==
-----END CERTIFICATE-----
`;

describe('checked connector over HTTPS', () => {
  let server: Server;
  let port: number;
  const seen: Array<{ servername: string | false | null; host: string | undefined }> = [];
  beforeAll(async () => {
    server = createServer({ key: KEY, cert: CERT }, (req, res) => {
      seen.push({ servername: (req.socket as TLSSocket).servername, host: req.headers.host });
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('dialling the checked address keeps SNI, the certificate check and the Host header on the original name', async () => {
    const lookup = scriptedLookup(['127.0.0.1']);
    const agent = new Agent({ connect: checkedConnector({ allow: hostAllowList(['svc.test', '127.0.0.1']), lookup, tls: { ca: CERT } }) });
    try {
      const res = await request(`https://svc.test:${port}/x`, { dispatcher: agent });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('ok');
      expect(seen.at(-1)).toEqual({ servername: 'svc.test', host: `svc.test:${port}` });
      expect(lookup.calls).toEqual(['svc.test']);
    } finally {
      await agent.close();
    }
  });

  it('a certificate that does not name the host still fails (the pinning does not weaken TLS)', async () => {
    const lookup = scriptedLookup(['127.0.0.1']);
    const agent = new Agent({ connect: checkedConnector({ allow: hostAllowList(['other.test', '127.0.0.1']), lookup, tls: { ca: CERT } }) });
    const count = seen.length;
    try {
      await expect(request(`https://other.test:${port}/x`, { dispatcher: agent })).rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
      expect(seen.length).toBe(count);
    } finally {
      await agent.close();
    }
  });
});
