/**
 * The datasource of a `sql` task (issue #22): the content of the team's secret the task names,
 * a URL `mysql://user:password@host:port/database` (scheme `mariadb:` too; port default 3306;
 * user name and password percent-encoded; `?ssl=true` for TLS with the system's CAs). Pure.
 *
 * A value that is not such a URL is a `DatasourceError` naming the datasource and what is
 * wrong — never the value itself, which holds a password.
 */

/** The port of a URL without one. */
export const DEFAULT_MYSQL_PORT = 3306;

/** Where and as whom a sql task connects. */
export interface Datasource {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** The default database; undefined when the URL names none. */
  readonly database: string | undefined;
  /** TLS (`?ssl=true`), certificates checked. */
  readonly ssl: boolean;
  /** The URL as the log shows it: the password as `***`. */
  readonly display: string;
  /** Strings of the value to mask in output: the whole URL and the password as written and decoded. */
  readonly secrets: readonly string[];
}

/** A datasource secret that is not a usable URL. */
export class DatasourceError extends Error {
  override readonly name = 'DatasourceError';
  constructor(datasource: string, why: string) {
    super(`datasource ${JSON.stringify(datasource)}: ${why}`);
  }
}

const SHAPE = 'mysql://user:password@host:port/database';

function decode(datasource: string, text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new DatasourceError(datasource, `the ${what} in its URL is not valid percent-encoding`);
  }
}

/**
 * Parses the secret's value (`text`) of the datasource `datasource`.
 *
 * @throws DatasourceError when it is not a `mysql://user:password@host:port/database` URL.
 */
export function parseDatasourceUrl(datasource: string, text: string): Datasource {
  const trimmed = text.trim();
  if (trimmed === '') throw new DatasourceError(datasource, `the secret is empty; it must hold a URL ${SHAPE}`);
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new DatasourceError(datasource, `the secret is not a URL; it must hold ${SHAPE}`);
  }
  if (url.protocol !== 'mysql:' && url.protocol !== 'mariadb:') {
    throw new DatasourceError(datasource, `the URL's scheme is ${JSON.stringify(url.protocol.slice(0, 20))}, expected mysql: (${SHAPE})`);
  }
  if (url.hostname === '') throw new DatasourceError(datasource, `the URL names no host (${SHAPE})`);
  if (url.username === '') throw new DatasourceError(datasource, `the URL names no user (${SHAPE})`);
  const port = url.port === '' ? DEFAULT_MYSQL_PORT : Number(url.port);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new DatasourceError(datasource, 'the URL\'s port is not 1-65535');
  const path = url.pathname.replace(/^\//, '');
  if (path.includes('/')) throw new DatasourceError(datasource, `the URL's path must be one database name (${SHAPE})`);
  const database = path === '' ? undefined : decode(datasource, path, 'database name');
  let ssl = false;
  for (const [key, value] of url.searchParams) {
    if (key !== 'ssl') throw new DatasourceError(datasource, `the URL has the parameter ${JSON.stringify(key.slice(0, 40))}; only ssl=true is understood`);
    if (value !== 'true' && value !== 'false') throw new DatasourceError(datasource, 'the URL\'s ssl parameter must be true or false');
    ssl = value === 'true';
  }
  if (url.hash !== '') throw new DatasourceError(datasource, `the URL has a #fragment (${SHAPE})`);
  const password = decode(datasource, url.password, 'password');
  const shown = new URL(url.href);
  if (shown.password !== '') shown.password = '***';
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
    user: decode(datasource, url.username, 'user name'),
    password,
    database,
    ssl,
    display: shown.href,
    secrets: [...new Set([text, trimmed, url.href, url.password, password].filter((value) => value !== ''))],
  };
}
