/**
 * The `exec` field of a task definition (ADMIN-API.md): `shell`, `http`, `plugin`, `python` or
 * `sql` (issue #22).
 * Header and env values are either a literal string or `{"secretRef":"NAME"}`, resolved on
 * the worker from the file `AX_SECRETS_DIR/<team>/<NAME>` of the task's team (ADMIN-API.md
 * "Secrets") and never stored in clear.
 */
import { z } from 'zod';
import { describeValue } from './issues.js';
import { shellTemplateProblems, templateProblems, templateProblemsIn } from './template.js';

/** Env names. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `secretRef` names: a file name in the team's secrets folder (never `.` or `..`, no separator). */
export const SECRET_NAME_PATTERN = /^(?!\.\.?$)[A-Za-z0-9_.-]{1,128}$/;
/** RFC 9110 token characters: what an HTTP header name may contain. */
export const HEADER_NAME_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Plugin module names: no path separators, so a name can never leave the plugin directory. */
export const PLUGIN_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** Headers ax sets itself on HTTP executions; a task may not override them (case-insensitive). */
export const RESERVED_HEADER_NAMES: readonly string[] = [
  'content-type',
  'idempotency-key',
  'x-ax-timestamp',
  'x-ax-signature',
  'x-ax-previous-signature',
  'x-ax-team',
  'x-ax-key-version',
  'x-ax-worker',
];

/** HTTP methods an `http` task may use. */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** `{"secretRef":"NAME"}`: the secret file NAME of the task's team, read on the worker. */
export const secretRefSchema = z.strictObject({
  secretRef: z.string().regex(SECRET_NAME_PATTERN, {
    error: (iss) => `must be a secret name (1-128 letters, digits, "_", ".", "-"; not "." or ".."), got ${describeValue(iss.input)}`,
  }),
});

/** A header or env value: a literal string or a secret reference. */
export const secretableValueSchema = z.union([z.string(), secretRefSchema], {
  error: (iss) => `must be a string or {"secretRef":"NAME"}, got ${describeValue(iss.input)}`,
});

const envNameSchema = z.string().regex(ENV_NAME_PATTERN, {
  error: (iss) => `environment variable name ${describeValue(iss.input)} is invalid (letters, digits, _; not starting with a digit)`,
});

const headerNameSchema = z
  .string()
  .regex(HEADER_NAME_PATTERN, { error: (iss) => `header name ${describeValue(iss.input)} is not a valid HTTP token` })
  .refine((name) => !RESERVED_HEADER_NAMES.includes(name.toLowerCase()), {
    error: (iss) => `header ${describeValue(iss.input)} is set by ax and cannot be overridden`,
  });

/**
 * `{"type":"shell","command":["python3","run.py","--date","{{bizDate}}"],"env":{},"cwd":"/srv"}`.
 * `command` is an argv (program first, never empty); it runs without a shell unless
 * `shell: true` (default false), in which case the arguments are joined for `/bin/sh -c`.
 */
export const shellExecSchema = z.strictObject({
  type: z.literal('shell'),
  command: z
    .array(
      z.string().superRefine((arg, ctx) => {
        for (const message of templateProblems(arg)) ctx.addIssue({ code: 'custom', message, input: arg });
      }),
    )
    .min(1)
    .superRefine((argv, ctx) => {
      if (argv[0] === '') ctx.addIssue({ code: 'custom', path: [0], message: 'the program (first element) must not be empty', input: argv[0] });
    }),
  env: z.record(envNameSchema, secretableValueSchema).optional(),
  cwd: z.string().min(1).optional(),
  shell: z.boolean().default(false),
}).superRefine((exec, ctx) => {
  // Under shell: true each value is quoted as one word; a placeholder inside quotes, a comment
  // or `${…}` would still be injectable, so it is refused when the task is saved, not only
  // when it runs (template.ts refuses it there too).
  if (!exec.shell) return;
  for (const problem of shellTemplateProblems(exec.command)) {
    ctx.addIssue({ code: 'custom', path: ['command', ...problem.path], message: problem.message, input: exec.command[problem.path[0]] });
  }
});

/**
 * `{"type":"http","url":"http://orders.internal:8080/ax/order_stat"}`: the worker sends the
 * instance JSON with `method` (default POST), signed with HMAC, plus `headers`.
 */
export const httpExecSchema = z.strictObject({
  type: z.literal('http'),
  url: z.url({
    protocol: /^https?$/,
    error: (iss) => `must be an http:// or https:// URL, got ${describeValue(iss.input)}`,
  }),
  method: z.enum(HTTP_METHODS).default('POST'),
  headers: z.record(headerNameSchema, secretableValueSchema).optional(),
});

/** `{"type":"plugin","name":"archive_files","config":{}}`; `config` defaults to `{}`. */
export const pluginExecSchema = z.strictObject({
  type: z.literal('plugin'),
  name: z.string().regex(PLUGIN_NAME_PATTERN, {
    error: (iss) => `must be a plugin name (letters, digits, _ . -; at most 128 characters), got ${describeValue(iss.input)}`,
  }),
  config: z
    .record(z.string(), z.unknown())
    .superRefine((config, ctx) => {
      for (const problem of templateProblemsIn(config)) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
    })
    .default(() => ({})),
});

/** Bytes of inline Python (`code`) at most: it is passed as one argument (`python -c`). */
export const MAX_PYTHON_CODE_BYTES = 65_536;
/** Characters of a path (`script`, `interpreter`, `venv`, `cwd` of python) at most. */
export const MAX_PATH_LENGTH = 4_096;
/** A program found on PATH: `python3`, `python3.12`, `pypy3`. */
const PROGRAM_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127}$/;

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).length;

/** A file or folder path of a python task: non-empty, bounded, without NUL (never an argv). */
const pathSchema = z
  .string()
  .min(1)
  .max(MAX_PATH_LENGTH)
  .refine((text) => !text.includes('\0'), { error: 'must not contain a NUL character' });

/** One argument of a templated argv (shell `command`, python `args`): known placeholders only. */
const templatedArgSchema = z.string().superRefine((arg, ctx) => {
  if (arg.includes('\0')) ctx.addIssue({ code: 'custom', message: 'must not contain a NUL character', input: arg });
  for (const message of templateProblems(arg)) ctx.addIssue({ code: 'custom', message, input: arg });
});

/**
 * `{"type":"python","script":"/srv/jobs/report.py","args":["--date","{{bizDate}}"]}` (issue #22):
 * a Python program run like a shell job (own process group, timeout, cancel, output, secrets).
 * Exactly one of `script` (a file, run as `<python> -- <script> <args…>`) and `code` (inline,
 * `<python> -c <code> <args…>`). The interpreter is `interpreter` (an absolute path or a program
 * on PATH, default `python3`) or the virtualenv `venv` (`<venv>/bin/python`, with VIRTUAL_ENV
 * set and `<venv>/bin` first on PATH), not both. Templates are expanded in `args` only; `env`
 * and `cwd` are as for `shell`.
 */
export const pythonExecSchema = z
  .strictObject({
    type: z.literal('python'),
    script: pathSchema.optional(),
    code: z
      .string()
      .refine((code) => code.trim() !== '', { error: 'must not be empty' })
      .refine((code) => !code.includes('\0'), { error: 'must not contain a NUL character' })
      .refine((code) => utf8Bytes(code) <= MAX_PYTHON_CODE_BYTES, {
        error: `must be at most ${MAX_PYTHON_CODE_BYTES} bytes (put a longer program in a file and name it in script)`,
      })
      .optional(),
    args: z.array(templatedArgSchema).default(() => []),
    interpreter: pathSchema
      .refine((text) => text.startsWith('/') || PROGRAM_NAME_PATTERN.test(text), {
        error: (iss) => `must be an absolute path or the name of a program on PATH (like "python3"), got ${describeValue(iss.input)}`,
      })
      .optional(),
    venv: pathSchema
      .refine((text) => text.startsWith('/'), { error: (iss) => `must be the absolute path of a virtualenv, got ${describeValue(iss.input)}` })
      .optional(),
    env: z.record(envNameSchema, secretableValueSchema).optional(),
    cwd: pathSchema.optional(),
  })
  .superRefine((exec, ctx) => {
    if (exec.script === undefined && exec.code === undefined) {
      ctx.addIssue({ code: 'custom', path: ['script'], message: 'is required: give the script to run (a file) or code (inline Python)', input: undefined });
    } else if (exec.script !== undefined && exec.code !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['code'], message: 'give either script or code, not both', input: exec.code });
    }
    if (exec.interpreter !== undefined && exec.venv !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['venv'], message: 'give either interpreter or venv, not both (a virtualenv brings its own interpreter)', input: exec.venv });
    }
  });

/** `{{name}}`-like text in SQL: the user expected a template there, and SQL gets none. */
const SQL_PLACEHOLDER = /\{\{\s*[A-Za-z_][A-Za-z0-9_.-]*\s*\}\}/;

/** SQL text (`statement` or `script`): not blank, and no `{{…}}` placeholder (never expanded). */
const sqlTextSchema = z.string().superRefine((text, ctx) => {
  if (text.trim() === '') {
    ctx.addIssue({ code: 'custom', message: 'must not be empty', input: text });
    return;
  }
  if (text.includes('\0')) ctx.addIssue({ code: 'custom', message: 'must not contain a NUL character', input: text });
  const placeholder = SQL_PLACEHOLDER.exec(text)?.[0];
  if (placeholder !== undefined) {
    ctx.addIssue({
      code: 'custom',
      message:
        `placeholder ${JSON.stringify(placeholder)}: templates are not expanded in SQL (a value pasted into SQL could change the statement); ` +
        'use the session variables @ax_biz_date, @ax_expected_time, @ax_execution_id and @ax_params (JSON) instead',
      input: text,
    });
  }
});

/**
 * `{"type":"sql","datasource":"REPORTS_DB","statement":"UPDATE …"}` (issue #22): one
 * `statement`, or a `script` of several `;`-separated statements (exactly one of them), run on
 * MySQL/MariaDB. `datasource` names a secret of the task's team (resolved like a secretRef)
 * whose content is `mysql://user:password@host:port/database`.
 */
export const sqlExecSchema = z
  .strictObject({
    type: z.literal('sql'),
    datasource: z.string().regex(SECRET_NAME_PATTERN, {
      error: (iss) => `must be a secret name (1-128 letters, digits, "_", ".", "-"; not "." or ".."), got ${describeValue(iss.input)}`,
    }),
    statement: sqlTextSchema.optional(),
    script: sqlTextSchema.optional(),
  })
  .superRefine((exec, ctx) => {
    if (exec.statement === undefined && exec.script === undefined) {
      ctx.addIssue({ code: 'custom', path: ['statement'], message: 'is required: give one statement, or a script of several', input: undefined });
    } else if (exec.statement !== undefined && exec.script !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['script'], message: 'give either statement or script, not both', input: exec.script });
    }
  });

/** Any executor, told apart by `type`. */
export const execSchema = z.discriminatedUnion('type', [shellExecSchema, httpExecSchema, pluginExecSchema, pythonExecSchema, sqlExecSchema]);

/** The exec types, in the order they are listed. */
export const EXEC_TYPES = ['shell', 'http', 'plugin', 'python', 'sql'] as const;

/** Field names of each exec type (used to suggest a field for a typo). */
export const EXEC_FIELDS: Readonly<Record<string, readonly string[]>> = {
  shell: Object.keys(shellExecSchema.shape),
  http: Object.keys(httpExecSchema.shape),
  plugin: Object.keys(pluginExecSchema.shape),
  python: Object.keys(pythonExecSchema.shape),
  sql: Object.keys(sqlExecSchema.shape),
};

/** A header or env value as stored: literal or secret reference. */
export type SecretableValue = z.output<typeof secretableValueSchema>;
/** `{"secretRef":"NAME"}`. */
export type SecretRef = z.output<typeof secretRefSchema>;
/** A `shell` executor after defaults. */
export type ShellExec = z.output<typeof shellExecSchema>;
/** An `http` executor after defaults. */
export type HttpExec = z.output<typeof httpExecSchema>;
/** A `plugin` executor after defaults. */
export type PluginExec = z.output<typeof pluginExecSchema>;
/** A `python` executor after defaults. */
export type PythonExec = z.output<typeof pythonExecSchema>;
/** A `sql` executor after defaults. */
export type SqlExec = z.output<typeof sqlExecSchema>;
/** Any executor after defaults. */
export type Exec = z.output<typeof execSchema>;
/** Any executor as written (defaults not yet applied). */
export type ExecInput = z.input<typeof execSchema>;
