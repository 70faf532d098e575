#!/usr/bin/env node
// Generates packages/api-types/src/generated.ts, the TypeScript types of the admin API, from its
// OpenAPI document: `pnpm gen:api-types` (after `pnpm build`: the document is built from the
// compiled route registry of services/admin-api, dist/, exactly as the server builds it).
//
// Why generated: the console and axctl read the same responses; writing their types by hand in
// each client let them drift from the server (and from each other). The zod schemas of the routes
// are the single source: they validate requests, describe the OpenAPI document, and through this
// script type both clients. packages/api-types/src/generated.test.ts regenerates the text in
// memory and fails when the committed file differs, so a route change must come with a rerun.
//
// The JSON Schema → TypeScript conversion is our own (the subset `z.toJSONSchema` emits: objects
// with required/optional properties, records, arrays, enum/const, nullable via type arrays or
// anyOf, unions, allOf, $ref to components); the output depends only on the document.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const GENERATED_PATH = path.join(root, 'packages', 'api-types', 'src', 'generated.ts');

/** The OpenAPI document of every route, built from admin-api's compiled registry without a server. */
export async function loadOpenApiDocument() {
  const dist = path.join(root, 'services', 'admin-api', 'dist');
  const load = (file) => import(pathToFileURL(path.join(dist, file)).href);
  const [{ API_ROUTES }, { buildOpenApiDocument }, { systemRoutes }] = await Promise.all([
    load('app.js'),
    load('openapi.js'),
    load('routes/system.js'),
  ]);
  return buildOpenApiDocument([...systemRoutes(() => ({}), () => false), ...API_ROUTES]);
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const key = (name) => (IDENT.test(name) ? name : JSON.stringify(name));
const pad = (depth) => '  '.repeat(depth);

// A JSDoc line for a description (one line, a comment end in it defused).
function doc(description, depth) {
  if (typeof description !== 'string' || description === '') return '';
  const text = description.replace(/\s+/g, ' ').trim().replace(/\*\//g, '*\\/');
  return `${pad(depth)}/** ${text} */\n`;
}

/** Joins union members, dropping duplicates, `never` and moving `null` last. */
function union(members) {
  const unique = [...new Set(members)].filter((m) => m !== 'never');
  if (unique.includes('unknown')) return 'unknown';
  if (unique.length === 0) return 'never';
  const nonNull = unique.filter((m) => m !== 'null');
  const ordered = unique.includes('null') ? [...nonNull, 'null'] : nonNull;
  // `&` binds tighter than `|`, and no member is a function type: no parentheses needed.
  return ordered.join(' | ');
}

function refType(ref) {
  const match = /^#\/components\/schemas\/(.+)$/.exec(ref);
  if (match === null) throw new Error(`gen-api-types: unsupported $ref ${ref}`);
  return `Schemas[${JSON.stringify(match[1])}]`;
}

function objectType(schema, depth) {
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const lines = Object.entries(properties).map(([name, prop]) => {
    const optional = required.has(name) ? '' : '?';
    return `${doc(prop.description, depth + 1)}${pad(depth + 1)}${key(name)}${optional}: ${toTs(prop, depth + 1)};`;
  });
  const extra = schema.additionalProperties;
  let index = null;
  if (extra !== false && !(Object.keys(properties).length > 0 && extra === undefined)) {
    const valueType = extra === undefined || extra === true ? 'unknown' : toTs(extra, depth + 1);
    const keys = schema.propertyNames?.enum;
    if (Array.isArray(keys)) {
      // A record keyed by an enum (`z.record(z.enum(…), …)`).
      index = `{ [K in ${keys.map((k) => JSON.stringify(k)).join(' | ')}]?: ${valueType} }`;
    } else {
      index = `{ [key: string]: ${valueType} }`;
    }
  }
  if (lines.length === 0) return index ?? 'Record<string, never>';
  const body = `{\n${lines.join('\n')}\n${pad(depth)}}`;
  if (index === null) return body;
  // Known properties beside an open set of others: each keeps its type.
  return index === '{ [key: string]: unknown }' ? `${body} & { [key: string]: unknown }` : `${body} & ${index}`;
}

/** The TypeScript type of a JSON Schema (draft 2020-12, as `z.toJSONSchema` writes it). */
export function toTs(schema, depth = 0) {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (schema.$ref !== undefined) return refType(schema.$ref);
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map((v) => JSON.stringify(v)));
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) {
    const base = { ...schema };
    delete base.anyOf;
    delete base.oneOf;
    delete base.description;
    delete base.default;
    const types = alternatives.map((alt) => toTs(alt, depth));
    return Object.keys(base).some((k) => k === 'type' || k === 'properties') ? `${toTs(base, depth)} & (${union(types)})` : union(types);
  }
  if (Array.isArray(schema.allOf)) return schema.allOf.map((part) => `(${toTs(part, depth)})`).join(' & ');
  if (Array.isArray(schema.type)) return union(schema.type.map((type) => toTs({ ...schema, type }, depth)));
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      if (Array.isArray(schema.prefixItems)) return `[${schema.prefixItems.map((item) => toTs(item, depth)).join(', ')}]`;
      const item = toTs(schema.items, depth);
      return /[|&]/.test(item) && !item.startsWith('{') ? `Array<${item}>` : `${item}[]`;
    }
    case 'object':
      return objectType(schema, depth);
    case undefined:
      return schema.properties !== undefined ? objectType(schema, depth) : 'unknown';
    default:
      throw new Error(`gen-api-types: unsupported type ${JSON.stringify(schema.type)}`);
  }
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The `Operations` entry of one operation. */
function operationType(op, opKey, depth) {
  const inner = depth + 1;
  const members = [];
  const byLocation = (location) => (op.parameters ?? []).filter((p) => p.in === location);
  const paramsObject = (params, withRequired) => {
    if (params.length === 0) return 'Record<string, never>';
    const lines = params.map((p) => `${doc(p.description, inner + 1)}${pad(inner + 1)}${key(p.name)}${withRequired && !p.required ? '?' : ''}: ${toTs(p.schema, inner + 1)};`);
    return `{\n${lines.join('\n')}\n${pad(inner)}}`;
  };
  members.push(`${pad(inner)}params: ${paramsObject(byLocation('path'), false)};`);
  members.push(`${pad(inner)}query: ${paramsObject(byLocation('query'), true)};`);
  let body = 'never';
  if (op.requestBody !== undefined) {
    const content = op.requestBody.content ?? {};
    body = content['application/json'] !== undefined ? toTs(content['application/json'].schema, inner) : 'string';
    if (op.requestBody.required !== true) body = union([body, 'undefined']);
  }
  members.push(`${pad(inner)}body: ${body};`);
  const success = Object.entries(op.responses ?? {}).filter(([status]) => /^2\d\d$/.test(status));
  const responses = success.map(([status, response]) => {
    const content = response.content ?? {};
    const json = content['application/json'];
    // No body (204): void; a text body (logs, metrics, SSE): its text.
    const type = json !== undefined ? toTs(json.schema, inner + 1) : Object.keys(content).length === 0 ? 'void' : 'string';
    return [status, type, response.description];
  });
  members.push(`${pad(inner)}/** The body of a success response (the union when several statuses succeed). */`);
  const statuses = responses.map(([status]) => status).join(' | ');
  members.push(`${pad(inner)}response: ${responses.length === 0 ? 'never' : `Operations[${JSON.stringify(opKey)}]["responses"][${statuses}]`};`);
  const byStatus = responses.map(([status, type, description]) => `${doc(description, inner + 1)}${pad(inner + 1)}${status}: ${type};`);
  // A route that only redirects (302, OIDC sign-in) has no success body to type.
  members.push(byStatus.length === 0 ? `${pad(inner)}responses: Record<never, never>;` : `${pad(inner)}responses: {\n${byStatus.join('\n')}\n${pad(inner)}};`);
  return `{\n${members.join('\n')}\n${pad(depth)}}`;
}

const HEADER = `// GENERATED by scripts/gen-api-types.mjs from the admin API's OpenAPI document: do not edit.
// Regenerate with \`pnpm build && pnpm gen:api-types\` after changing a route or schema of
// services/admin-api; packages/api-types/src/generated.test.ts fails while this file is stale.
`;

/** The text of generated.ts for an OpenAPI document (by default the admin API's, built from dist/). */
export async function generateApiTypes(document) {
  const openapi = document ?? (await loadOpenApiDocument());
  const out = [HEADER];
  out.push(`/** The component schemas of the document (\`$ref: #/components/schemas/…\`). */`);
  const schemas = Object.entries(openapi.components?.schemas ?? {});
  out.push(`export interface Schemas {\n${schemas.map(([name, schema]) => `${doc(schema.description, 1)}${pad(1)}${key(name)}: ${toTs(schema, 1)};`).join('\n')}\n}\n`);
  out.push(`/**
 * Every operation, keyed by \`"METHOD /path"\` as the document spells the path: its path
 * \`params\`, \`query\` parameters, JSON \`body\` (\`never\`: none; \`string\`: a YAML body), the
 * body of its success \`response\` and each success status in \`responses\` (\`void\`: no body;
 * \`string\`: a text body).
 */`);
  const entries = [];
  for (const [route, item] of Object.entries(openapi.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (op === undefined) continue;
      const summary = [op.summary, op['x-ax-access'] === undefined ? undefined : `(${op['x-ax-access']})`].filter(Boolean).join(' ');
      const opKey = `${method.toUpperCase()} ${route}`;
      entries.push(`${doc(summary, 1)}${pad(1)}${JSON.stringify(opKey)}: ${operationType(op, opKey, 1)};`);
    }
  }
  out.push(`export interface Operations {\n${entries.join('\n')}\n}\n`);
  out.push(`/** An operation's key. */
export type OperationKey = keyof Operations;
`);
  return out.join('\n');
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = await generateApiTypes();
  writeFileSync(GENERATED_PATH, text);
  process.stdout.write(`gen-api-types: wrote ${path.relative(root, GENERATED_PATH)} (${text.split('\n').length} lines)\n`);
}
