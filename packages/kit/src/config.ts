/**
 * Configuration comes only from environment variables and is parsed once, with zod, into a
 * resolved typed object (CONVENTIONS habit 3). A service composes the fields it needs (the ax
 * variables of DESIGN §8 are in ax-config.ts; builders for its own in env-fields.ts) and calls
 * `loadConfigOrExit` in `main.ts`; everything after that takes the resolved type.
 *
 * An empty (or blank) variable counts as unset. A wrong value is reported as one line naming the
 * variable, the value (never a secret's, and URLs with their password masked) and what is
 * wrong, and the process exits with code 2.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { UNSET_PARAM, type Env, type EnvContext, type EnvField } from './env-fields.js';

export type { Env, EnvContext, EnvField, Sensitivity, Unit } from './env-fields.js';

/** A set of fields keyed by the property name they resolve to. */
export type EnvFields = Readonly<Record<string, EnvField<unknown>>>;

/** The resolved configuration of a set of fields. */
export type ConfigOf<F extends EnvFields> = {
  readonly [K in keyof F]: F[K] extends EnvField<infer T> ? T : never;
};

/** One wrong variable. */
export interface ConfigIssue {
  /** The environment variable, e.g. `AX_ACK_TIMEOUT_MS`. */
  readonly variable: string;
  /** Whether it was unset (and required) rather than set to a wrong value. */
  readonly unset: boolean;
  /** The value as it may be shown: quoted, masked or `<redacted>`. */
  readonly shownValue: string;
  /** What is wrong, e.g. `expected a positive integer (milliseconds)`. */
  readonly problem: string;
}

/** Thrown by `loadConfig` when at least one variable is wrong. `message` is the one line. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(formatConfigIssues(issues));
  }
}

/** Options of `loadConfig`. */
export interface LoadConfigOptions {
  /** Directory relative paths resolve against; default `process.cwd()`. */
  readonly cwd?: string;
}

/**
 * Parses `env` (default `process.env`) against `fields` and returns the resolved, frozen
 * configuration, or throws `ConfigError` listing every wrong variable.
 */
export function loadConfig<F extends EnvFields>(
  fields: F,
  env: Env = process.env,
  options: LoadConfigOptions = {},
): ConfigOf<F> {
  const cleaned: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.trim() !== '') cleaned[name] = value;
  }
  const fileIssues = readCredentialFiles(fields, cleaned);
  const ctx: EnvContext = {
    env: cleaned,
    production: cleaned.NODE_ENV === 'production',
    cwd: options.cwd ?? process.cwd(),
  };
  const shape: Record<string, z.ZodType<unknown, string | undefined>> = {};
  const input: Record<string, string | undefined> = {};
  for (const [key, field] of Object.entries(fields)) {
    shape[key] = field.schema(ctx);
    input[key] = cleaned[field.env];
  }
  const result = z.object(shape).safeParse(input);
  if (result.success && fileIssues.length === 0) return Object.freeze(result.data) as ConfigOf<F>;

  const issues: ConfigIssue[] = [...fileIssues];
  const seen = new Set<string>(fileIssues.map((i) => i.variable.replace(/_FILE$/, '')));
  if (result.success) throw new ConfigError(issues);
  for (const issue of result.error.issues) {
    const key = issue.path[0];
    const field = typeof key === 'string' ? fields[key] : undefined;
    if (field === undefined || seen.has(field.env)) continue;
    seen.add(field.env);
    const raw = cleaned[field.env];
    const unset = raw === undefined || isUnsetIssue(issue);
    issues.push({
      variable: field.env,
      unset,
      shownValue: raw === undefined ? '' : showValue(raw, field.sensitivity),
      problem: issue.message,
    });
  }
  throw new ConfigError(issues);
}

/** Suffix of the variable naming a file that holds a credential's value (`AX_AMQP_URL_FILE`). */
export const FILE_SUFFIX = '_FILE';

/**
 * #44: every credential (a field that is not `public`: URLs with a password, tokens, keys) may
 * be given as a file, `<NAME>_FILE=/run/secrets/…` (Docker and Kubernetes secrets), so it never
 * sits in the process's environment. The file's content, one trailing newline removed, becomes
 * the value of `<NAME>` in `cleaned` (and is then checked like any value). Setting both, or a file
 * that cannot be read, is an issue naming `<NAME>_FILE` (never the file's content). The forms:
 * AX_MYSQL_URL_FILE, AX_REDIS_URL_FILE, AX_AMQP_URL_FILE, AX_AMQP_MANAGEMENT_URL_FILE, AX_REDIS_SENTINEL_PASSWORD_FILE,
 * AX_ADMIN_TOKEN_FILE, AX_EXECUTOR_SECRET_FILE, AX_ALERT_WEBHOOK_URL_FILE.
 */
function readCredentialFiles(fields: EnvFields, cleaned: Record<string, string>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const field of Object.values(fields)) {
    if (field.sensitivity === 'public') continue;
    const fileVariable = `${field.env}${FILE_SUFFIX}`;
    const file = cleaned[fileVariable];
    if (file === undefined) continue;
    const shownValue = JSON.stringify(file.slice(0, MAX_SHOWN_CHARS));
    if (cleaned[field.env] !== undefined) {
      issues.push({ variable: fileVariable, unset: false, shownValue, problem: `set either ${field.env} or ${fileVariable}, not both` });
      continue;
    }
    let text: string;
    try {
      text = readFileSync(file.trim(), 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      issues.push({ variable: fileVariable, unset: false, shownValue, problem: `expected a readable file holding ${field.env} (${code})` });
      continue;
    }
    const value = text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text;
    if (value.trim() === '') {
      issues.push({ variable: fileVariable, unset: false, shownValue, problem: `the file holding ${field.env} is empty` });
      continue;
    }
    cleaned[field.env] = value;
  }
  return issues;
}

function isUnsetIssue(issue: z.core.$ZodIssue): boolean {
  return issue.code === 'custom' && (issue.params as Record<string, unknown> | undefined)?.[UNSET_PARAM] === true;
}

const MAX_SHOWN_CHARS = 120;

/** How a value appears in an error line. */
export function showValue(raw: string, sensitivity: EnvField<unknown>['sensitivity']): string {
  if (sensitivity === 'secret') return '<redacted>';
  let shown = sensitivity === 'url' ? maskUrlPassword(raw) : raw;
  if (shown.length > MAX_SHOWN_CHARS) shown = `${shown.slice(0, MAX_SHOWN_CHARS)}…`;
  // JSON quoting escapes newlines and quotes, so the message stays one line.
  return JSON.stringify(shown);
}

/**
 * Replaces the password of a URL (`scheme://user:password@host`) with `***`, also in strings
 * that do not parse as a URL.
 */
export function maskUrlPassword(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)[^\s/]*@/gi, '$1***@');
}

/** The single line describing the issues: the first in full, the others named. */
export function formatConfigIssues(issues: readonly ConfigIssue[], prefix = 'ax'): string {
  const [first, ...rest] = issues;
  if (first === undefined) return `${prefix}: configuration is invalid`;
  const head = first.unset
    ? `${prefix}: ${first.variable} is not set: ${first.problem}`
    : `${prefix}: ${first.variable}=${first.shownValue} is invalid: ${first.problem}`;
  if (rest.length === 0) return head;
  return `${head} (also wrong: ${rest.map((i) => i.variable).join(', ')})`;
}

/** What `loadConfigOrExit` uses to report and stop; injectable for tests. */
export interface ExitIo {
  /** Writes the error line; default `process.stderr.write`. */
  readonly writeError?: (line: string) => void;
  /** Ends the process; default `process.exit`. Must not return (or the caller throws). */
  readonly exit?: (code: number) => void;
  /** Prefix of the line; default `ax`. */
  readonly prefix?: string;
}

/** Exit code for a configuration error (as for a usage error). */
export const CONFIG_ERROR_EXIT_CODE = 2;

/**
 * `loadConfig`, but on a `ConfigError` writes exactly one line to stderr, e.g.
 * `ax: AX_ACK_TIMEOUT_MS="abc" is invalid: expected a positive integer (milliseconds)`,
 * and exits with code 2. Any other error propagates.
 */
export function loadConfigOrExit<F extends EnvFields>(
  fields: F,
  env: Env = process.env,
  io: ExitIo & LoadConfigOptions = {},
): ConfigOf<F> {
  try {
    return loadConfig(fields, env, io);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const line = formatConfigIssues(error.issues, io.prefix ?? 'ax');
    (io.writeError ?? ((l: string) => process.stderr.write(l)))(`${line}\n`);
    (io.exit ?? ((code: number) => process.exit(code)))(CONFIG_ERROR_EXIT_CODE);
    // Reached only with an injected exit that returns.
    throw error;
  }
}

/** Picks some fields of a field set, keeping their types: `pickFields(axConfigFields, ['redisUrl'])`. */
export function pickFields<F extends EnvFields, const K extends keyof F>(fields: F, keys: readonly K[]): Pick<F, K> {
  const out: Partial<Pick<F, K>> = {};
  for (const k of keys) out[k] = fields[k];
  return out as Pick<F, K>;
}
