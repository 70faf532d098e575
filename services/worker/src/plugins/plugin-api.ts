/**
 * The contract of a worker plugin (§5): an ES module in `AX_PLUGIN_DIR` (a `<name>.js`/`.mjs`
 * file, or a directory with an `index.js`/`index.mjs`) exporting:
 *
 * - `run(ctx)` (required): does the work; returns `{success, message?, data?}` (nothing =
 *   success) or throws (= failed attempt with the error's message). Must stop when
 *   `ctx.signal` aborts; the worker kills the run's process group after a grace anyway.
 * - `describe()` (optional): `{name?, version?, description?}`; `name` is what tasks reference
 *   (`{"type":"plugin","name":…}`), default the file or directory name without extension.
 * - `init(ctx)` (optional): once per process before the first `prepare`.
 * - `prepare(ctx)` (optional): validates `ctx.config` before `run`; a throw fails the attempt.
 *
 * Each run happens in a child process of its own (its own process group), so a hanging plugin
 * is killed at its timeout without touching the worker.
 */

/** What a plugin's `run`, `prepare` and `init` receive. */
export interface PluginContext {
  /** The task's `exec.config`, templates expanded. */
  readonly config: Record<string, unknown>;
  readonly params: Record<string, unknown>;
  readonly executionId: string;
  readonly instanceId: string;
  readonly taskName: string;
  readonly bizDate: string;
  readonly expectedTime: string;
  readonly attempt: number;
  readonly idempotencyKey: string;
  readonly traceId: string;
  /** ISO-8601 deadline of the attempt. */
  readonly deadline: string;
  /** Aborted at the deadline or on a cancel. */
  readonly signal: AbortSignal;
  /** Writes a line to the run's stdout (the attempt's log, and the result's output tail). */
  log(...parts: unknown[]): void;
  /** Writes a line to the run's stderr (the attempt's log, and the result's output tail). */
  error(...parts: unknown[]): void;
}

/** What `run` may return. */
export interface PluginResult {
  readonly success: boolean;
  readonly message?: string;
  readonly data?: Record<string, unknown>;
}

/** A plugin's self-description. */
export interface PluginDescription {
  readonly name?: string;
  readonly version?: string;
  readonly description?: string;
}

/** The module shape. */
export interface PluginModule {
  run(ctx: PluginContext): Promise<PluginResult | void> | PluginResult | void;
  describe?(): PluginDescription;
  init?(ctx: PluginContext): Promise<void> | void;
  prepare?(ctx: PluginContext): Promise<void> | void;
}

/** Parent → runner: start the run (sent only after the process group is recorded, R13). */
export interface RunnerStart {
  readonly type: 'start';
  readonly file: string;
  readonly context: Omit<PluginContext, 'signal' | 'log' | 'error'>;
}

/** Parent → runner: stop (deadline or cancel); the runner aborts `ctx.signal`. */
export interface RunnerStop {
  readonly type: 'stop';
}

/** Runner → parent: how the run ended. */
export interface RunnerResult {
  readonly type: 'result';
  readonly success: boolean;
  readonly message?: string;
  readonly data?: Record<string, unknown>;
}
