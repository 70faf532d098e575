/**
 * The child process of one plugin run (forked by `plugin-executor.ts`). It waits for the
 * `start` message — sent once the worker has recorded this process group (R13) — imports the
 * plugin, runs `init`, `prepare` and `run`, sends the result and exits. If the worker goes away
 * (IPC closed) before the start, it exits without running anything.
 */
import { pathToFileURL } from 'node:url';
import { format } from 'node:util';
import type { PluginContext, PluginModule, PluginResult, RunnerResult, RunnerStart, RunnerStop } from './plugin-api.js';

const controller = new AbortController();

function send(message: RunnerResult): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined) return resolve();
    process.send(message, undefined, undefined, () => resolve());
  });
}

async function runPlugin(start: RunnerStart): Promise<RunnerResult> {
  const mod = (await import(pathToFileURL(start.file).href)) as Partial<PluginModule>;
  if (typeof mod.run !== 'function') return { type: 'result', success: false, message: 'the plugin exports no run function' };
  const ctx: PluginContext = {
    ...start.context,
    signal: controller.signal,
    log: (...parts: unknown[]) => void process.stdout.write(`${format(...parts)}\n`),
    error: (...parts: unknown[]) => void process.stderr.write(`${format(...parts)}\n`),
  };
  await mod.init?.(ctx);
  await mod.prepare?.(ctx);
  const result: PluginResult | void = await mod.run(ctx);
  if (result === undefined) return { type: 'result', success: true };
  return { type: 'result', success: result.success === true, message: result.message, data: result.data };
}

process.on('message', (message: RunnerStart | RunnerStop) => {
  if (message.type === 'stop') {
    controller.abort(new Error('stopped'));
    return;
  }
  void (async () => {
    let result: RunnerResult;
    try {
      result = await runPlugin(message);
    } catch (error) {
      result = { type: 'result', success: false, message: error instanceof Error ? error.message : String(error) };
    }
    await send(result);
    process.exit(0);
  })();
});

process.on('disconnect', () => {
  // The worker is gone: nothing may run unrecorded or unreported.
  process.exit(125);
});
