/**
 * A TCP proxy a test can cut and restore (an outage of one server for one client), or move to
 * another server (a VIP or DNS name moved to a promoted replica in a failover drill).
 */
import net from 'node:net';

/** Where a proxy forwards. */
export interface ProxyTarget {
  readonly host: string;
  readonly port: number;
}

/** A running proxy. */
export interface CuttableProxy {
  readonly port: number;
  /** Where new connections go now. */
  readonly target: ProxyTarget;
  /** Drops every connection and refuses new ones. */
  cut(): Promise<void>;
  /** Accepts connections again on the same port. */
  restore(): Promise<void>;
  /**
   * Sends new connections to `target` from now on. Connections already open stay on the old
   * server, as they do when a VIP or DNS record moves: closing them is the failover's own step.
   */
  retarget(target: ProxyTarget): void;
  close(): Promise<void>;
}

/** Starts a proxy on a free port of 127.0.0.1 to `host:port`. */
export async function startTcpProxy(initial: ProxyTarget): Promise<CuttableProxy> {
  const sockets = new Set<net.Socket>();
  let target: ProxyTarget = { host: initial.host, port: initial.port };
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  const stopListening = (): Promise<void> =>
    new Promise((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    });
  return {
    port,
    get target() {
      return target;
    },
    cut: stopListening,
    restore: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve())),
    retarget(next) {
      target = { host: next.host, port: next.port };
    },
    close: stopListening,
  };
}

/** `url` with its host and port replaced by the proxy's (e.g. an AMQP URL through the proxy). */
export function throughProxy(url: string, proxy: CuttableProxy): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}
