/**
 * The fast accept check of a dispatch item's `exec` (mirrors `task/exec-schema.ts`): returns
 * what `execSchema` would output, or `undefined` when it is not certain zod accepts the value.
 * Exec objects are strict, so any field not listed here declines.
 */
import type { Exec, HttpExec, PluginExec, SecretableValue, ShellExec } from '../task/exec-schema.js';
import { ENV_NAME_PATTERN, HEADER_NAME_PATTERN, HTTP_METHODS, PLUGIN_NAME_PATTERN, RESERVED_HEADER_NAMES, SECRET_NAME_PATTERN } from '../task/exec-schema.js';
import { templateProblems } from '../task/template.js';
import { isNonEmptyString, isObject, isOneOf } from './fast-fields.js';

// zod's `z.url({ protocol: /^https?$/ })` requires this prefix before it parses (no `http:x`).
const HTTP_URL_PREFIX = /^https?:\/\//i;
// zod strips these from the URL it returns; a URL holding one is left to zod.
const TAB_OR_NEWLINE = /[\t\n\r]/;

const SHELL_KEYS: ReadonlySet<string> = new Set(['type', 'command', 'env', 'cwd', 'shell']);
const HTTP_KEYS: ReadonlySet<string> = new Set(['type', 'url', 'method', 'headers']);
const PLUGIN_KEYS: ReadonlySet<string> = new Set(['type', 'name', 'config']);
const SECRET_REF_KEYS: ReadonlySet<string> = new Set(['secretRef']);

/** `execSchema`. */
export function acceptExec(value: unknown): Exec | undefined {
  if (!isObject(value)) return undefined;
  switch (value.type) {
    case 'shell':
      return hasOnlyKeys(value, SHELL_KEYS) ? acceptShell(value) : undefined;
    case 'http':
      return hasOnlyKeys(value, HTTP_KEYS) ? acceptHttp(value) : undefined;
    case 'plugin':
      return hasOnlyKeys(value, PLUGIN_KEYS) ? acceptPlugin(value) : undefined;
    default:
      return undefined;
  }
}

/** A strict object: zod reports every key outside the shape (it walks `for…in`, as here). */
function hasOnlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

function acceptShell(exec: Record<string, unknown>): ShellExec | undefined {
  const { command, env, cwd, shell } = exec;
  if (!Array.isArray(command) || command.length === 0 || command[0] === '') return undefined;
  for (const arg of command as unknown[]) if (typeof arg !== 'string' || hasUnknownPlaceholder(arg)) return undefined;
  const outEnv = env === undefined ? undefined : acceptSecretableRecord(env, isEnvName);
  if (env !== undefined && outEnv === undefined) return undefined;
  if (cwd !== undefined && !isNonEmptyString(cwd)) return undefined;
  if (shell !== undefined && typeof shell !== 'boolean') return undefined;
  // Keys in the schema's order, absent optionals absent, `shell` defaulted: zod's output exactly.
  const out: Record<string, unknown> = { type: 'shell', command };
  if (outEnv !== undefined) out.env = outEnv;
  if (cwd !== undefined) out.cwd = cwd;
  out.shell = shell ?? false;
  return out as ShellExec;
}

function acceptHttp(exec: Record<string, unknown>): HttpExec | undefined {
  const { url, method, headers } = exec;
  if (!isPlainHttpUrl(url)) return undefined;
  if (method !== undefined && !isOneOf(HTTP_METHODS, method)) return undefined;
  const outHeaders = headers === undefined ? undefined : acceptSecretableRecord(headers, isOwnHeaderName);
  if (headers !== undefined && outHeaders === undefined) return undefined;
  const out: Record<string, unknown> = { type: 'http', url, method: method ?? 'POST' };
  if (outHeaders !== undefined) out.headers = outHeaders;
  return out as HttpExec;
}

function acceptPlugin(exec: Record<string, unknown>): PluginExec | undefined {
  const { name, config } = exec;
  if (typeof name !== 'string' || !PLUGIN_NAME_PATTERN.test(name)) return undefined;
  if (config !== undefined && (!isObject(config) || hasUnknownPlaceholderIn(config))) return undefined;
  // zod copies a record key by key; the parsed JSON object is fresh and unshared, so it serves.
  return { type: 'plugin', name, config: config ?? {} };
}

/**
 * An http(s) URL zod returns unchanged: no surrounding whitespace and no tab/CR/LF (zod trims and
 * strips those), the `http://`/`https://` prefix, and parseable by the WHATWG parser zod uses
 * (the prefix already fixes the protocol to http or https).
 */
function isPlainHttpUrl(url: unknown): url is string {
  return typeof url === 'string' && HTTP_URL_PREFIX.test(url) && !TAB_OR_NEWLINE.test(url) && url.trim() === url && URL.canParse(url);
}

function isEnvName(name: string): boolean {
  return ENV_NAME_PATTERN.test(name);
}

function isOwnHeaderName(name: string): boolean {
  return HEADER_NAME_PATTERN.test(name) && !RESERVED_HEADER_NAMES.includes(name.toLowerCase());
}

/** `z.record(key, secretableValueSchema)`: a new object whose `{secretRef}` values are copies. */
function acceptSecretableRecord(value: unknown, isKey: (key: string) => boolean): Record<string, SecretableValue> | undefined {
  if (!isObject(value)) return undefined;
  const out: Record<string, SecretableValue> = {};
  for (const key of Object.keys(value)) {
    if (!isKey(key)) return undefined;
    const item = value[key];
    if (typeof item === 'string') out[key] = item;
    else if (isObject(item) && hasOnlyKeys(item, SECRET_REF_KEYS) && typeof item.secretRef === 'string' && SECRET_NAME_PATTERN.test(item.secretRef)) {
      out[key] = { secretRef: item.secretRef };
    } else return undefined;
  }
  return out;
}

/** `templateProblems(text).length > 0`, skipping the regex scan when no `{{` can start a placeholder. */
function hasUnknownPlaceholder(text: string): boolean {
  return text.includes('{{') && templateProblems(text).length > 0;
}

/** `templateProblemsIn(value).length > 0` without building paths (depth is bounded by the structure guard). */
function hasUnknownPlaceholderIn(value: unknown): boolean {
  if (typeof value === 'string') return hasUnknownPlaceholder(value);
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return (value as unknown[]).some(hasUnknownPlaceholderIn);
  for (const key of Object.keys(value)) if (hasUnknownPlaceholderIn((value as Record<string, unknown>)[key])) return true;
  return false;
}
