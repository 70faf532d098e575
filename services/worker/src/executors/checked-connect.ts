/**
 * The connector of the http executor's undici agent when `AX_HTTP_EXECUTOR_ALLOW` is an
 * explicit list: each new connection resolves the host once (every address), checks every
 * address against the list (host-allow.ts) and then dials the checked address itself — the
 * socket is opened to the IP, so nothing resolves the name a second time and a DNS answer
 * that changes after the check (rebinding) cannot move the connection. TLS keeps the original
 * name for SNI and the certificate check; the Host header is undici's, from the URL.
 * Kept-alive connections are reused as they are: they were checked when they were opened.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { buildConnector } from 'undici';
import type { HostAllowList } from './host-allow.js';

/** Resolves a host name to all its addresses (`dns.lookup` with `all: true`). */
export type HostLookup = (hostname: string) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>;

/** The system resolver (`/etc/hosts`, then DNS), like the connection itself would use. */
export const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true });

/** A connection refused by the address check; `message` is the attempt's error. */
export class HostRefusedError extends Error {
  override readonly name = 'HostRefusedError';
  readonly code = 'HOST_REFUSED';
}

/** Dial errors after which the next checked address is tried. */
const NEXT_ADDRESS_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'EAFNOSUPPORT',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Options of `checkedConnector`. */
export interface CheckedConnectorOptions {
  readonly allow: HostAllowList;
  /** Default `systemLookup`; tests inject answers. */
  readonly lookup?: HostLookup;
  /** Options of undici's connector (a TLS `ca`, the connect timeout); unused with `dial`. */
  readonly tls?: buildConnector.BuildOptions;
  /** Opens a connection to one address; default undici's connector (tests record the calls). */
  readonly dial?: buildConnector.connector;
}

/** Builds the connector: resolve once, check every address, dial only checked addresses. */
export function checkedConnector(options: CheckedConnectorOptions): buildConnector.connector {
  const lookup = options.lookup ?? systemLookup;
  const dial = options.dial ?? buildConnector(options.tls ?? {});

  async function checkedAddresses(hostname: string, port: string): Promise<string[]> {
    const family = isIP(hostname);
    const answers = family !== 0 ? [{ address: hostname, family }] : await lookup(hostname);
    if (answers.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    for (const { address } of answers) {
      const refusal = options.allow.refusal(hostname, port, address);
      if (refusal !== undefined) throw new HostRefusedError(`HOST_REFUSED: ${hostname} resolves to ${address} (${refusal})`);
    }
    return answers.map((answer) => answer.address);
  }

  return (connectOptions, callback) => {
    // undici passes IPv6 hosts without brackets.
    const { hostname, protocol } = connectOptions;
    const port = connectOptions.port || (protocol === 'https:' ? '443' : '80');
    const servername = connectOptions.servername || (isIP(hostname) === 0 ? hostname : undefined);
    checkedAddresses(hostname, port).then(
      (addresses) => {
        const attempt = (index: number): void => {
          dial({ ...connectOptions, hostname: addresses[index] ?? hostname, servername }, (...result) => {
            const code = (result[0] as { code?: unknown } | null)?.code;
            if (result[0] !== null && index + 1 < addresses.length && typeof code === 'string' && NEXT_ADDRESS_CODES.has(code)) attempt(index + 1);
            else callback(...result);
          });
        };
        attempt(0);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
    );
  };
}
