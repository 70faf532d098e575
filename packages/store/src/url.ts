import { InvalidDatabaseUrlError } from './errors.js';

/** The parts of an `AX_MYSQL_URL` (`mysql://user:password@host:port/database`). */
export interface MysqlUrl {
  readonly host: string;
  /** TCP port; 3306 when the URL has none. */
  readonly port: number;
  readonly user: string;
  /** Empty string when the URL has none. */
  readonly password: string;
  /** `null` for a server URL without a database (`mysql://root@127.0.0.1:3306`). */
  readonly database: string | null;
}

/** Database names ax creates or connects to: letters, digits, `_`, `$`, `-`; at most 64. */
const DATABASE_NAME = /^[0-9A-Za-z_$-]{1,64}$/;

/**
 * Parses `mysql://user:password@host:port/database`. `mariadb://` is accepted as a synonym.
 * User, password and database are percent-decoded. Query parameters are refused: every pool
 * option is set in code, so a `?ssl=` that would silently be ignored is an error instead.
 */
export function parseMysqlUrl(url: string): MysqlUrl {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // The WHATWG parser's message would echo the URL, password included.
    throw new InvalidDatabaseUrlError(`${redactMysqlUrl(url)} is not a URL`);
  }
  const shown = redactMysqlUrl(url);
  if (parsed.protocol !== 'mysql:' && parsed.protocol !== 'mariadb:') {
    throw new InvalidDatabaseUrlError(`${shown}: scheme must be mysql://`);
  }
  if (parsed.hostname === '') {
    throw new InvalidDatabaseUrlError(`${shown}: host is missing`);
  }
  if (parsed.search !== '' || parsed.hash !== '') {
    throw new InvalidDatabaseUrlError(`${shown}: query parameters are not supported`);
  }
  const port = parsed.port === '' ? 3306 : Number(parsed.port);
  const path = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (path.includes('/')) {
    throw new InvalidDatabaseUrlError(`${shown}: the path must be a single database name`);
  }
  if (path !== '') assertDatabaseName(path);
  return {
    // IPv6 literals come back bracketed from URL.hostname; the socket API wants them bare.
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
    user: decodeURIComponent(parsed.username) || 'root',
    password: decodeURIComponent(parsed.password),
    database: path === '' ? null : path,
  };
}

/** Throws {@link InvalidDatabaseUrlError} unless `name` is a database name ax accepts. */
export function assertDatabaseName(name: string): void {
  if (!DATABASE_NAME.test(name)) {
    throw new InvalidDatabaseUrlError(
      `database name ${JSON.stringify(name)} must be 1-64 characters of [0-9A-Za-z_$-]`,
    );
  }
}

/**
 * The URL with its password replaced by `***`, safe for logs and error messages. Works on
 * strings that do not parse, too (best effort on the `user:password@` part).
 */
export function redactMysqlUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*):[^@/?#]*@/i, '$1:***@');
}

/** The same server URL pointing at another database (or at none with `null`). */
export function withDatabase(url: string, database: string | null): string {
  const parsed = new URL(url);
  if (database !== null) assertDatabaseName(database);
  parsed.pathname = database === null ? '' : `/${database}`;
  return parsed.toString().replace(/\/$/, '');
}
