/**
 * The OpenAPI 3.1 document, built from the route registry: the same zod schemas that validate
 * requests describe them here (`z.toJSONSchema`), so the document lists exactly what is served.
 */
import { z } from 'zod';
import { JSON_BODY_LIMITS, MAX_REPORTED_ISSUES } from '@ax/core';
import type { RouteSpec } from './route.js';
import { errorSchema } from './schemas.js';

type Json = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): Json {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
  delete out['$schema'];
  return out;
}

function objectShape(schema: z.ZodType | undefined): Record<string, z.ZodType> {
  if (schema instanceof z.ZodObject) return schema.shape;
  return {};
}

const STANDARD_ERRORS: Record<number, string> = {
  400:
    `\`VALIDATION_FAILED\` with \`details.issues\` = \`[{path, message}]\` (at most ${MAX_REPORTED_ISSUES}, then one saying the rest were left out); ` +
    `a JSON body over a size cap (more than ${JSON_BODY_LIMITS.arrayLength} items in an array, ${JSON_BODY_LIMITS.objectKeys} keys in an object, ` +
    `${JSON_BODY_LIMITS.nodes} values in all, or ${JSON_BODY_LIMITS.depth} levels) is refused before validation with one issue and \`details.limit\`, \`details.max\``,
  401: 'missing or unknown token (or a bad signature on HMAC routes)',
  403: 'the token\'s role is too low',
  404: '`NOT_FOUND`',
  409: 'conflict',
  413: '`PAYLOAD_TOO_LARGE`: body over AX_REQUEST_BODY_LIMIT_BYTES (default 1 MiB)',
  415: 'unsupported content type',
  429: '`RATE_LIMITED`: too many failed authentications from this address',
  503: 'a dependency is unavailable',
};

/** The answer every write route may give (write-transaction.ts). */
const WRITE_CONFLICT =
  '`UNAVAILABLE` (`details.reason` `LOCK_CONFLICT`): the transaction lost its lock race (deadlock, lock wait) on every attempt; nothing was written, send it again after `Retry-After`';

/** Standard errors that carry `Retry-After`. */
const RETRY_AFTER: Readonly<Record<string, string>> = { 'Retry-After': 'seconds to wait before sending it again' };

function errorResponse(description: string, headers?: Readonly<Record<string, string>>): Json {
  return {
    description,
    ...(headers === undefined ? {} : { headers: Object.fromEntries(Object.entries(headers).map(([name, text]) => [name, { description: text, schema: { type: 'string' } }])) }),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
}

function operation(route: RouteSpec): Json {
  const parameters: Json[] = [];
  for (const [name, schema] of Object.entries(objectShape(route.params))) {
    parameters.push({ name, in: 'path', required: true, schema: jsonSchema(schema) });
  }
  for (const [name, schema] of Object.entries(objectShape(route.query))) {
    const json = jsonSchema(schema);
    const description = schema.description;
    parameters.push({ name, in: 'query', required: !schema.safeParse(undefined).success, schema: json, ...(description ? { description } : {}) });
  }
  for (const [name, description] of Object.entries(route.headers ?? {})) {
    parameters.push({ name, in: 'header', required: route.access === 'hmac', description, schema: { type: 'string' } });
  }
  const responses: Json = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    const code = Number(status);
    if (code >= 400) {
      responses[status] = errorResponse(spec.description, spec.headers);
      continue;
    }
    const headers = spec.headers === undefined ? {} : { headers: Object.fromEntries(Object.entries(spec.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }])) };
    responses[status] = spec.schema === undefined
      ? { description: spec.description, ...headers }
      : { description: spec.description, ...headers, content: { [spec.contentType ?? 'application/json']: { schema: jsonSchema(spec.schema, 'output') } } };
  }
  const add = (code: number, description = STANDARD_ERRORS[code] ?? 'error', headers?: Readonly<Record<string, string>>): void => {
    if (responses[String(code)] === undefined) responses[String(code)] = errorResponse(description, headers);
  };
  if (route.params !== undefined || route.query !== undefined || route.body !== undefined || route.headers !== undefined) add(400);
  if (route.access !== 'public') add(401);
  if (route.access === 'worker') add(429, STANDARD_ERRORS[429], RETRY_AFTER);
  if (route.access === 'viewer' || route.access === 'operator' || route.access === 'admin') {
    add(403);
    add(429, STANDARD_ERRORS[429], RETRY_AFTER);
    if (route.method !== 'get') {
      const own = route.responses[503];
      // a route's own 503 (a secret not configured) stays; the write conflict is the other cause
      responses['503'] = errorResponse(own === undefined ? WRITE_CONFLICT : `${own.description}; or ${WRITE_CONFLICT}`, { ...own?.headers, ...RETRY_AFTER });
    }
  }
  if (route.body !== undefined) {
    add(413);
    add(415);
  }
  const op: Json = {
    operationId: `${route.method}${route.path.replace(/\{([^}]+)\}/g, 'By_$1').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: route.summary,
    tags: [route.tag],
    'x-ax-access': route.access,
    ...(route.extension === true ? { 'x-ax-extension': true } : {}),
    ...(route.description === undefined ? {} : { description: route.description }),
    ...(parameters.length > 0 ? { parameters } : {}),
    security:
      route.access === 'public'
        ? []
        : route.access === 'hmac'
          ? [{ axTimestamp: [], axSignature: [] }]
          : route.access === 'worker'
            ? [{ workerCredential: [] }]
            : [{ bearer: [] }],
    responses,
  };
  if (route.body !== undefined) {
    const contentType = route.body.kind === 'yaml' ? 'application/yaml' : 'application/json';
    op['requestBody'] = {
      required: route.body.optional !== true,
      ...(route.body.description === undefined ? {} : { description: route.body.description }),
      content: { [contentType]: { schema: jsonSchema(route.body.schema) } },
    };
  }
  return op;
}

/** The document of these routes. */
export function buildOpenApiDocument(routes: readonly RouteSpec[], version = '1.0.0'): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const item = (paths[route.path] ??= {});
    item[route.method] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'ax admin API',
      version,
      description: 'REST API of ax, the distributed job scheduler. Roles: viewer < operator < admin. Errors: {"error":{"code","message","details"}}.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: jsonSchema(errorSchema, 'output') },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'an API token (AX_ADMIN_TOKEN or POST /api/v1/tokens)' },
        workerCredential: { type: 'http', scheme: 'bearer', description: 'a worker enrollment credential `axw_<enrollment id>_<secret>` (POST /api/v1/workers/enrollments); not an API token' },
        axTimestamp: { type: 'apiKey', in: 'header', name: 'X-Ax-Timestamp', description: 'unix ms of the signed request' },
        axSignature: { type: 'apiKey', in: 'header', name: 'X-Ax-Signature', description: 'sha256=<hex HMAC-SHA256 of "<timestamp>.<body>"> with AX_EXECUTOR_SECRET' },
      },
    },
  };
}
