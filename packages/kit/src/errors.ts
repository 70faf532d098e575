/**
 * Error handling helpers (CONVENTIONS habit 7): convert `unknown` to `Error` at every catch,
 * and one table of what is worth retrying.
 */

/**
 * Converts anything thrown into an `Error`. An `Error` is returned as is; anything else is
 * wrapped, with the original kept as `cause`.
 */
export function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  let message: string;
  if (typeof value === 'string') {
    message = value;
  } else {
    try {
      message = JSON.stringify(value) ?? String(value);
    } catch {
      // Not serialisable (a cycle, a BigInt): the default string form is the best we have.
      message = String(value);
    }
  }
  return new Error(`non-error thrown: ${message}`, { cause: value });
}

/**
 * Error codes that describe a transient condition: the same operation may succeed when
 * retried after a pause. Node socket errors, DNS hiccups, mysql2 protocol and server codes
 * (MySQL 8 and MariaDB 10.11 share them). Redis failover replies are recognised by their message.
 */
export const RETRYABLE_ERROR_CODES: ReadonlySet<string> = new Set([
  // Node sockets and DNS
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  // mysql2 client-side
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  // MySQL / MariaDB server
  'ER_LOCK_DEADLOCK', // 1213
  'ER_LOCK_WAIT_TIMEOUT', // 1205
  'ER_CON_COUNT_ERROR', // 1040
  'ER_TOO_MANY_USER_CONNECTIONS', // 1203
  'ER_SERVER_SHUTDOWN', // 1053
  'ER_CLIENT_INTERACTION_TIMEOUT', // 4031 (MySQL 8)
  'ER_QUERY_INTERRUPTED', // 1317 (a killed query during failover)
  'ER_OPTION_PREVENTS_STATEMENT', // 1290 (read-only replica right after a failover)
]);

/** MySQL / MariaDB server error numbers with the same meaning as the codes above. */
const RETRYABLE_ERRNOS: ReadonlySet<number> = new Set([1213, 1205, 1040, 1203, 1053, 4031, 1317, 1290]);

/** Redis error replies start with an upper-case word naming the condition (ioredis keeps it in the message). */
const REDIS_RETRYABLE_REPLIES: ReadonlySet<string> = new Set(['LOADING', 'READONLY', 'TRYAGAIN', 'CLUSTERDOWN', 'MASTERDOWN']);

/** Messages of client libraries that say "the connection is gone" without a code. */
const RETRYABLE_MESSAGES: readonly RegExp[] = [
  /^Connection is closed\.?$/, // ioredis
  /^Reached the max retries per request limit/, // ioredis MaxRetriesPerRequestError
  /^Command timed out$/, // ioredis commandTimeout
  /^(Channel|Connection) closed/, // amqplib IllegalOperationError
  /^Socket closed abruptly/, // amqplib
];

/** The `code` of an error-like value, if it has a string one. */
export function errorCode(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * True when the error (or any error in its `cause` chain, or inside an `AggregateError`, as Node
 * raises for a host with both IPv4 and IPv6 addresses) is a transient network, database or
 * Redis condition worth retrying after a pause. Validation errors, SQL syntax errors, unique-key
 * conflicts and the like are not.
 */
export function isRetryableError(value: unknown): boolean {
  return check(value, 0);
}

function check(value: unknown, depth: number): boolean {
  if (depth > 8 || typeof value !== 'object' || value === null) return false;
  const code = errorCode(value);
  if (code !== undefined && RETRYABLE_ERROR_CODES.has(code)) return true;
  const errno = (value as { errno?: unknown }).errno;
  if (typeof errno === 'number' && RETRYABLE_ERRNOS.has(errno) && 'sqlState' in value) return true;
  const message = (value as { message?: unknown }).message;
  if (typeof message === 'string') {
    if (REDIS_RETRYABLE_REPLIES.has(message.split(' ', 1)[0] ?? '')) return true;
    if (RETRYABLE_MESSAGES.some((re) => re.test(message))) return true;
  }
  if (value instanceof AggregateError && value.errors.some((e) => check(e, depth + 1))) return true;
  return check((value as { cause?: unknown }).cause, depth + 1);
}
