/**
 * `AX_HTTP_EXECUTOR_ALLOW` and a team's `httpAllow` (ADMIN-API.md "Teams"): the matcher lives
 * in core (core/src/net/host-allow.ts), where admin-api validates a team's entries with the
 * same parser the worker enforces them with.
 */
export { allowEntryProblem, hostAllowList, narrowAllowList, type HostAllowList } from '@ax/core';
