/** Who the caller is (extension): the console asks it at sign-in to offer only what the role may do. */
import { z } from 'zod';
import { ROLES } from '../auth.js';
import { ApiError } from '../errors.js';
import { defineRoute, type RouteSpec } from '../route.js';

export const sessionRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/api/v1/whoami',
    access: 'viewer',
    tag: 'admin',
    extension: true,
    summary: "The caller's token name and role (extension)",
    responses: {
      200: { description: 'the caller', schema: z.object({ name: z.string(), role: z.enum(ROLES), tokenId: z.string(), teams: z.array(z.string()).describe('the teams the token acts for; ["*"] = every team') }) },
    },
    handler: ({ principal }) => {
      // Unreachable for a viewer route (the route layer authenticates first); kept as a typed guard.
      if (principal === null) throw new ApiError(401, 'UNAUTHENTICATED', 'a bearer token is required');
      return { status: 200, body: { name: principal.name, role: principal.role, tokenId: principal.tokenId, teams: principal.teams === '*' ? ['*'] : [...principal.teams] } };
    },
  }),
];
