/**
 * The route registry: each route declares its method, path, access (role, public or HMAC),
 * zod schemas of its path parameters, query and body, and its responses. The same declaration
 * mounts the express handler (validation → handler) and builds the OpenAPI document
 * (openapi.ts), so the document cannot drift from what is validated.
 */
import type { Request, Response } from 'express';
import type { z } from 'zod';
import { formatPath, type Issue } from '@ax/core';
import type { PoolConnection } from 'mysql2/promise';
import type { EnrollmentRecord } from '@ax/store';
import type { AppDeps } from './deps.js';
import type { Principal, Role } from './auth.js';

/**
 * Who may call a route: an API token of at least that role, anyone (`public`), business code
 * signing with its team's executor key (`hmac`), or a worker by its enrollment credential
 * (`worker`, worker-auth.ts).
 */
export type Access = Role | 'public' | 'hmac' | 'worker';

/** A body content type a route accepts. */
export type BodyKind = 'json' | 'yaml';

/** The validation result shape shared with @ax/core's parsers. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; issues: Issue[] };

/** A route's request body. */
export interface BodySpec<T> {
  /** Documented (and, without `parse`, validating) schema. */
  readonly schema: z.ZodType<T> | z.ZodType;
  /** `json` (default) or `yaml` (text). */
  readonly kind?: BodyKind;
  /** The body may be absent (an empty object is validated then). Default false. */
  readonly optional?: boolean;
  /** Custom parser built on the same schema (e.g. core's `parseTaskDefinition`); default `schema.safeParse`. */
  readonly parse?: (raw: unknown) => Parsed<T> | Promise<Parsed<T>>;
  readonly description?: string;
}

/** One documented response. */
export interface ResponseSpec {
  readonly description: string;
  readonly schema?: z.ZodType;
  /** Content type of the schema; default `application/json`. */
  readonly contentType?: string;
  /** Response headers documented (name → description). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** What a handler sees. */
export interface HandlerContext<P, Q, B> {
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  /** The caller (null for public and HMAC routes). */
  readonly principal: Principal | null;
  /** HMAC routes: the team whose executor key signed the request (hmac-verify.ts); else null. */
  readonly signedTeam: string | null;
  /** `worker` routes: the live enrollment whose credential the request carries; else null. */
  readonly enrollment: EnrollmentRecord | null;
  readonly deps: AppDeps;
  readonly req: Request;
  readonly res: Response;
  /** The raw body (HMAC routes verify it). */
  readonly rawBody: Buffer;
}

/** What a handler answers. */
export interface Reply {
  readonly status: number;
  /** JSON body (omitted for 204). */
  readonly body?: unknown;
  /** Already sent by the handler itself (e.g. `/metrics`). */
  readonly sent?: boolean;
}

/** A route declaration. */
export interface RouteSpec<P = unknown, Q = unknown, B = unknown> {
  readonly method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI-style path, e.g. `/api/v1/tasks/{name}`. */
  readonly path: string;
  readonly access: Access;
  readonly summary: string;
  readonly description?: string;
  readonly tag: string;
  readonly params?: z.ZodType<P>;
  readonly query?: z.ZodType<Q>;
  readonly body?: BodySpec<B>;
  /** Request headers documented as parameters (name → description). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Success and specific error responses by status. 401/403/400/413/415 are added from access and body. */
  readonly responses: Readonly<Record<number, ResponseSpec>>;
  /** Part of the contract (ADMIN-API.md) or an extension (documented as such). */
  readonly extension?: boolean;
  readonly handler: (ctx: HandlerContext<P, Q, B>) => Promise<Reply> | Reply;
}

/** Declares a route (keeps the handler's types tied to its schemas). */
export function defineRoute<P = Record<string, never>, Q = Record<string, never>, B = undefined>(spec: RouteSpec<P, Q, B>): RouteSpec {
  return spec as unknown as RouteSpec;
}

/** An express path from an OpenAPI one: `{name}` → `:name`. */
export function expressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

/** zod issues → contract issues (`[{path, message}]`), paths prefixed with where they came from. */
export function zodIssues(error: z.ZodError, prefix: readonly PropertyKey[] = []): Issue[] {
  return error.issues.map((issue) => {
    const path = formatPath([...prefix, ...issue.path]);
    const message = path === '' ? issue.message : `${path}: ${issue.message}`;
    return { path, message };
  });
}

/** Validates with a route's body spec. */
export function parseBody<B>(spec: BodySpec<B>, raw: unknown): Parsed<B> | Promise<Parsed<B>> {
  if (spec.parse !== undefined) return spec.parse(raw);
  const parsed = spec.schema.safeParse(raw);
  return parsed.success ? { ok: true, value: parsed.data as B } : { ok: false, issues: zodIssues(parsed.error) };
}

/** A connection inside a transaction, as handlers use it. */
export type Tx = PoolConnection;
