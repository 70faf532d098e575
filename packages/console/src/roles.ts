/** Roles lowest first (ADMIN-API.md "Conventions"): the console offers only what the role may do. */
import type { Role } from './types';

/** Every role, lowest first. */
export const ROLES: readonly Role[] = ['viewer', 'operator', 'admin'];
const ORDER = ROLES;

/** Whether `role` is at least `required`. */
export function can(role: Role, required: Role): boolean {
  return ORDER.indexOf(role) >= ORDER.indexOf(required);
}

/** Whether a string is a role. */
export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ORDER as readonly string[]).includes(value);
}
