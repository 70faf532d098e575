/** The OpenAPI document: valid OpenAPI 3.1, lists every endpoint of the contract, built from the same schemas. */
import { Validator } from '@seriousme/openapi-schema-validator';
import { DEFAULT_RETRY } from '@ax/core';
import { describe, expect, it } from 'vitest';
import { API_ROUTES } from './app.js';
import { buildOpenApiDocument } from './openapi.js';
import { systemRoutes } from './routes/system.js';

const document = buildOpenApiDocument([...systemRoutes(() => ({}), () => false), ...API_ROUTES]);

/** Every endpoint of shared/ADMIN-API.md, with its access. */
const CONTRACT: Array<[string, string, string]> = [
  ['get', '/healthz', 'public'],
  ['get', '/readyz', 'public'],
  ['get', '/metrics', 'public'],
  ['get', '/api/v1/openapi.json', 'public'],
  ['post', '/api/v1/tasks', 'operator'],
  ['put', '/api/v1/tasks/{name}', 'operator'],
  ['get', '/api/v1/tasks', 'viewer'],
  ['get', '/api/v1/tasks/{name}', 'viewer'],
  ['get', '/api/v1/tasks/{name}/preview', 'viewer'],
  ['delete', '/api/v1/tasks/{name}', 'admin'],
  ['post', '/api/v1/tasks/{name}/enable', 'operator'],
  ['post', '/api/v1/tasks/{name}/disable', 'operator'],
  ['post', '/api/v1/tasks/{name}/trigger', 'operator'],
  ['post', '/api/v1/tasks/import', 'operator'],
  ['post', '/api/v1/edges', 'operator'],
  ['delete', '/api/v1/edges', 'operator'],
  ['get', '/api/v1/dag', 'viewer'],
  ['get', '/api/v1/instances', 'viewer'],
  ['get', '/api/v1/instances/{id}', 'viewer'],
  ['post', '/api/v1/instances/{id}/cancel', 'operator'],
  ['post', '/api/v1/reruns', 'operator'],
  ['get', '/api/v1/workers', 'viewer'],
  ['post', '/api/v1/workers/enrollments', 'admin'],
  ['get', '/api/v1/workers/enrollments', 'admin'],
  ['delete', '/api/v1/workers/enrollments/{id}', 'admin'],
  ['post', '/api/v1/workers/{id}/drain', 'operator'],
  ['post', '/api/v1/workers/{id}/undrain', 'operator'],
  ['get', '/api/v1/status', 'viewer'],
  ['post', '/api/v1/dispatch/pause', 'admin'],
  ['post', '/api/v1/dispatch/resume', 'admin'],
  ['get', '/api/v1/stats/today', 'viewer'],
  ['get', '/api/v1/dead-letters', 'operator'],
  ['get', '/api/v1/audit', 'admin'],
  ['post', '/api/v1/tokens', 'admin'],
  ['delete', '/api/v1/tokens/{id}', 'admin'],
  ['post', '/api/v1/executions/{executionId}/report', 'hmac'],
  ['post', '/api/v1/executions/{executionId}/claim', 'hmac'],
  ['get', '/api/v1/teams', 'viewer'],
  ['post', '/api/v1/teams', 'admin'],
  ['patch', '/api/v1/teams/{name}', 'admin'],
  ['delete', '/api/v1/teams/{name}', 'admin'],
  ['get', '/api/v1/calendars', 'viewer'],
  ['get', '/api/v1/calendars/{name}', 'viewer'],
  ['put', '/api/v1/calendars/{name}', 'operator'],
  ['delete', '/api/v1/calendars/{name}', 'admin'],
];

type Op = { 'x-ax-access': string; requestBody?: { content: Record<string, { schema: Record<string, unknown> }> }; parameters?: Array<{ name: string; in: string }> };
const op = (method: string, path: string): Op | undefined => (document['paths'] as Record<string, Record<string, Op>>)[path]?.[method];

describe('OpenAPI document', () => {
  it('passes the OpenAPI schema validator', async () => {
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect((await new Validator().validate({ openapi: '3.1.0', paths: { x: 1 } })).valid).toBe(false);
  });

  it('lists every endpoint of the contract with its role', () => {
    for (const [method, path, access] of CONTRACT) {
      expect(op(method, path), `${method} ${path}`).toBeDefined();
      expect(op(method, path)?.['x-ax-access'], `${method} ${path}`).toBe(access);
    }
  });

  it('documents request bodies and query parameters from the validating schemas', () => {
    const create = op('post', '/api/v1/tasks')?.requestBody?.content['application/json']?.schema as { required?: string[]; properties?: Record<string, unknown> };
    expect(create.required?.sort()).toEqual(['exec', 'name', 'schedule']);
    expect(Object.keys(create.properties ?? {})).toEqual(expect.arrayContaining(['priority', 'retry', 'misfire', 'block', 'route']));
    expect(op('put', '/api/v1/tasks/{name}')?.requestBody?.content['application/json']?.schema['required']).toContain('version');
    expect(op('post', '/api/v1/tasks/import')?.requestBody?.content['application/yaml']).toBeDefined();
    expect(op('get', '/api/v1/instances')?.parameters?.map((p) => p.name)).toEqual(['task', 'team', 'state', 'bizDate', 'worker', 'trigger', 'from', 'to', 'limit', 'cursor']);
    const reruns = JSON.stringify(op('post', '/api/v1/reruns')?.requestBody);
    for (const mode of ['instance', 'dag', 'failed', 'backfill']) expect(reruns).toContain(`"${mode}"`);
  });

  it('shows the teams of tasks, instances and tokens', () => {
    type Schema = { properties?: Record<string, unknown>; required?: string[] };
    const body = (method: string, path: string): Schema =>
      op(method, path)?.requestBody?.content['application/json']?.schema as Schema;
    const response = (method: string, path: string, status: string): Schema =>
      (document['paths'] as Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>)[path]?.[method]
        ?.responses[status]?.content?.['application/json']?.schema ?? {};
    expect(Object.keys(body('post', '/api/v1/tasks').properties ?? {})).toContain('team');
    expect(Object.keys(response('get', '/api/v1/tasks/{name}', '200').properties ?? {})).toContain('team');
    expect(Object.keys(response('get', '/api/v1/instances/{id}', '200').properties ?? {})).toContain('team');
    expect(Object.keys(body('post', '/api/v1/tokens').properties ?? {})).toContain('teams');
    expect(Object.keys(response('post', '/api/v1/tokens', '201').properties ?? {})).toContain('teams');
    expect(Object.keys((document['paths'] as Record<string, Record<string, { responses: Record<string, unknown> }>>)['/api/v1/tokens']?.['post']?.responses ?? {})).toContain('409');
    expect(Object.keys(response('post', '/api/v1/teams', '201').properties ?? {})).toEqual(expect.arrayContaining(['name', 'maxRunning', 'keyVersion']));
  });

  it("#44 documents a team's httpAllow: in the create and change bodies and in the team resource", () => {
    type Schema = { properties?: Record<string, unknown> };
    const paths = document['paths'] as Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> }; responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>;
    expect(Object.keys(paths['/api/v1/teams']?.['post']?.requestBody?.content['application/json']?.schema.properties ?? {})).toContain('httpAllow');
    expect(Object.keys(paths['/api/v1/teams/{name}']?.['patch']?.requestBody?.content['application/json']?.schema.properties ?? {})).toContain('httpAllow');
    expect(Object.keys(paths['/api/v1/teams/{name}']?.['patch']?.responses['200']?.content?.['application/json']?.schema.properties ?? {})).toContain('httpAllow');
    expect(JSON.stringify(paths['/api/v1/teams/{name}']?.['delete'])).toContain('taken off every token');
  });

  it('documents the scheduling fields of issue #22 from the same zod schema that validates them', () => {
    type Schema = { properties?: Record<string, Schema>; required?: string[]; anyOf?: Schema[]; type?: string; maximum?: number; minimum?: number; default?: unknown };
    const create = op('post', '/api/v1/tasks')?.requestBody?.content['application/json']?.schema as Schema;
    const replace = op('put', '/api/v1/tasks/{name}')?.requestBody?.content['application/json']?.schema as Schema;
    for (const body of [create, replace]) {
      expect(Object.keys(body.properties ?? {})).toEqual(expect.arrayContaining(['calendar', 'jitterSeconds', 'pauseAfterFailures', 'sla', 'block']));
      expect(body.required).not.toContain('sla');
    }
    expect(create.properties?.['jitterSeconds']).toMatchObject({ type: 'integer', minimum: 0, maximum: 3600, default: 0 });
    const sla = JSON.stringify(create.properties?.['sla']);
    expect(sla).toContain('startWithinSeconds');
    expect(sla).toContain('finishWithinSeconds');
    const resource = (document['paths'] as Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>)['/api/v1/tasks/{name}']?.['get']
      ?.responses['200']?.content?.['application/json']?.schema;
    expect(Object.keys(resource?.properties ?? {})).toEqual(expect.arrayContaining(['calendar', 'jitterSeconds', 'pauseAfterFailures', 'sla', 'pausedReason', 'calendarSkippedCount']));
    expect(JSON.stringify(create.properties?.['block'])).toContain('"queue"');
    const calendarBody = op('put', '/api/v1/calendars/{name}')?.requestBody?.content['application/json']?.schema as Schema;
    expect(Object.keys(calendarBody.properties ?? {})).toEqual(['team', 'timezone', 'dates']);
    expect(calendarBody.required).toEqual(['dates']);
  });

  it('#22 documents the python and sql exec types, in request bodies and task responses', () => {
    type Schema = { properties?: Record<string, Schema>; required?: string[]; oneOf?: Schema[]; anyOf?: Schema[]; const?: unknown };
    const create = op('post', '/api/v1/tasks')?.requestBody?.content['application/json']?.schema as Schema;
    const resource = (document['paths'] as Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>)['/api/v1/tasks/{name}']?.['get']
      ?.responses['200']?.content?.['application/json']?.schema;
    for (const exec of [create.properties?.['exec'], resource?.properties?.['exec']]) {
      const variants = exec?.oneOf ?? exec?.anyOf ?? [];
      const byType = new Map(variants.map((v) => [v.properties?.['type']?.const, v]));
      expect([...byType.keys()]).toEqual(['shell', 'http', 'plugin', 'python', 'sql']);
      expect(Object.keys(byType.get('python')?.properties ?? {})).toEqual(['type', 'script', 'code', 'args', 'interpreter', 'venv', 'env', 'cwd']);
      expect(Object.keys(byType.get('sql')?.properties ?? {})).toEqual(['type', 'datasource', 'statement', 'script']);
      expect(byType.get('sql')?.required).toEqual(expect.arrayContaining(['type', 'datasource']));
    }
  });

  it('#44 documents worker enrollments: the credential shown once, the login server that failed, and the bootstrap\'s own credential auth', () => {
    type Schema = { properties?: Record<string, unknown>; required?: string[] };
    type Operation = { security?: unknown; responses: Record<string, { description: string; content?: Record<string, { schema: Schema }> } | undefined> };
    const paths = document['paths'] as Record<string, Record<string, Operation>>;
    const create = paths['/api/v1/workers/enrollments']?.['post'];
    expect(Object.keys(create?.responses['201']?.content?.['application/json']?.schema.properties ?? {})).toEqual(['id', 'name', 'teams', 'tags', 'createdAt', 'credential']);
    expect(create?.responses['503']?.description).toMatch(/details\.server/);
    expect(create?.responses['409']).toBeDefined();
    expect(paths['/api/v1/workers/enrollments/{id}']?.['delete']?.responses['404']).toBeDefined();
    const self = paths['/api/v1/workers/self']?.['get'];
    expect(self?.security).toEqual([{ workerCredential: [] }]);
    expect(Object.keys(self?.responses ?? {})).toEqual(expect.arrayContaining(['200', '401', '429', '503']));
    expect(Object.keys(self?.responses['200']?.content?.['application/json']?.schema.properties ?? {})).toEqual(['enrollment', 'workerIdPrefix', 'amqp', 'redis', 'keys']);
    expect(JSON.stringify(paths['/api/v1/workers']?.['get']?.responses['200'])).toContain('"enrollment"');
  });

  it('#45 documents the answers of the noisy-neighbour limits: 503 on every write, 413 on imports, 400 naming the cap on oversized JSON, 429 on log streams', () => {
    type Operation = { 'x-ax-access'?: string; responses: Record<string, { description: string; headers?: Record<string, unknown> } | undefined> };
    const paths = document['paths'] as Record<string, Record<string, Operation>>;
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (method === 'get' || op['x-ax-access'] === 'public' || op['x-ax-access'] === 'hmac') continue;
        expect(op.responses['503']?.headers?.['Retry-After'], `${method} ${path}`).toBeDefined();
      }
    }
    expect(paths['/api/v1/tasks']?.['post']?.responses['503']?.description).toMatch(/LOCK_CONFLICT/);
    expect(paths['/api/v1/tasks/import']?.['post']?.responses['413']?.description).toMatch(/2000 documents/);
    for (const [method, path] of [['post', '/api/v1/tasks'], ['put', '/api/v1/calendars/{name}']] as const) {
      const answers = paths[path]?.[method]?.responses;
      expect(answers?.['400']?.description, `${method} ${path}`).toMatch(/10000 items in an array, 1000 keys in an object, 20000 values in all, or 32 levels/);
      expect(answers?.['400']?.description, `${method} ${path}`).toMatch(/at most 100, then one saying the rest were left out/);
    }
    const stream = paths['/api/v1/executions/{executionId}/log/stream']?.['get']?.responses['429'];
    expect(stream?.description).toMatch(/AX_LOG_STREAMS_PER_TOKEN/);
    expect(stream?.headers?.['Retry-After']).toBeDefined();
  });

  it('#46 gives every retry policy the defaults of @ax/core (DEFAULT_RETRY), whole and field by field', () => {
    const retries: Array<Record<string, unknown>> = [];
    const walk = (node: unknown): void => {
      if (node === null || typeof node !== 'object') return;
      const properties = (node as { properties?: Record<string, unknown> }).properties;
      const retry = properties?.['retry'] as Record<string, unknown> | undefined;
      if (retry?.['default'] !== undefined) retries.push(retry);
      for (const child of Object.values(node)) walk(child);
    };
    walk(document);
    expect(retries.length).toBeGreaterThan(0);
    for (const retry of retries) {
      expect(retry['default']).toEqual({ ...DEFAULT_RETRY });
      const fields = retry['properties'] as Record<string, { default?: unknown }>;
      for (const [field, value] of Object.entries(DEFAULT_RETRY)) expect(fields[field]?.default, field).toBe(value);
    }
  });
});
