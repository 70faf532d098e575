/**
 * Keeps the broker's definition cache warm (`warmTaskDefinitions`, @ax/store): every few seconds,
 * and at once when `<ns>:task-changed` says a definition changed, the definitions of the enabled
 * tasks it does not hold at their current version are validated ahead of the claims. A burst of
 * thousands of tasks at one second then costs the claims a version lookup per task instead of a
 * validation (about a tenth of the broker's CPU in the 10,000-task burst, on the dispatch path).
 * The team directory (key versions, limits) is refreshed by the same pass.
 */
import { warmTaskDefinitions } from '@ax/store';
import type { BrokerContext } from './context.js';

/** Period of the warming pass; `<ns>:task-changed` runs it at once. */
export const DEFINITIONS_WARM_MS = 5_000;

/** One pass; says once (per change of state) when there are too many tasks to warm. */
export async function warmDefinitionsOnce(ctx: Pick<BrokerContext, 'pool' | 'definitions' | 'teams' | 'logger'>, state: { overCapacity: boolean }): Promise<void> {
  await ctx.teams.refresh(ctx.pool);
  const outcome = await warmTaskDefinitions(ctx.pool, ctx.definitions);
  if (outcome.overCapacity !== state.overCapacity) {
    state.overCapacity = outcome.overCapacity;
    if (outcome.overCapacity) {
      ctx.logger.info({ capacity: ctx.definitions.capacity }, 'more enabled tasks than the definition cache holds: not warming it (claims fill it)');
    }
  }
  if (outcome.loaded > 0) ctx.logger.debug({ loaded: outcome.loaded }, 'task definitions validated ahead of the claims');
}
