/**
 * A lost lock race (deadlock 1213, lock wait timeout 1205) is not an outage: the database
 * answered. Only a connection failure may mark the MySQL link down, because that suspends the
 * ACK and lease expiry for a lease period (R14); a deadlock between two brokers' claims must
 * not, and it is retried at once at warn level instead of logged as an error.
 */
export { isLockConflict } from '@ax/store';
