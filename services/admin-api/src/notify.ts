/** Redis pub/sub notifications after committed changes (DESIGN §3): best effort, logged on failure. */
import { toError } from '@ax/core';
import type { AppDeps } from './deps.js';

async function publish(deps: AppDeps, channel: string, payload: string): Promise<void> {
  try {
    await deps.redis.publish(channel, payload);
  } catch (err) {
    // Schedulers and brokers re-read periodically as the fallback.
    deps.logger.warn({ err: toError(err), channel }, 'could not publish a notification');
  }
}

/** `<ns>:task-changed` with the task name, so every scheduler reloads it. */
export async function notifyTaskChanged(deps: AppDeps, names: readonly string[]): Promise<void> {
  for (const name of names) await publish(deps, deps.keys.channels.taskChanged, name);
}

/** `<ns>:instances-ready`, so brokers claim at once. */
export async function notifyInstancesReady(deps: AppDeps, count: number): Promise<void> {
  if (count > 0) await publish(deps, deps.keys.channels.instancesReady, String(count));
}
