/**
 * A real OpenID provider for the browser tests: `oidc-provider` (a certified implementation) on
 * 127.0.0.1, with one confidential client (the console), PKCE required, a `groups` claim and its
 * development login form (any password) for the accounts given. `close` stops it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface TestProvider {
  readonly issuer: string;
  close(): Promise<void>;
}

/** Starts the provider for a console whose callback is `redirectUri`; `accounts`: login → groups. */
export async function startTestProvider(opts: {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  accounts: Readonly<Record<string, readonly string[]>>;
}): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: opts.clientId,
        client_secret: opts.clientSecret,
        redirect_uris: [opts.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    // Refuse any authorization request without PKCE: the console must send it.
    pkce: { required: () => true },
    scopes: ['openid', 'profile', 'groups'],
    claims: { openid: ['sub'], profile: ['preferred_username', 'name'], groups: ['groups'] },
    findAccount: (_ctx, sub) => {
      const groups = opts.accounts[sub];
      if (groups === undefined) return undefined;
      return { accountId: sub, claims: () => ({ sub, preferred_username: sub, name: sub, groups: [...groups] }) };
    },
    cookies: { keys: ['ax-browser-test-provider-cookie-key'] },
  });
  const handle = provider.callback();
  server.on('request', (req, res) => void handle(req, res));
  return {
    issuer,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
