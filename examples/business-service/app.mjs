// An ax HTTP executor service a business team can copy: three endpoints showing a synchronous
// success, a synchronous failure and an asynchronous job (202, then a signed report).
//
// `axExecutorApp` is a plain node:http request listener (no web framework needed); in an app of
// your own use the adapter of its framework: ax-scheduler-sdk/express, /fastify, /koa or /nest.
//
// Tasks point at them, e.g.
//   {"name":"order_stat_daily","schedule":{"type":"cron","expr":"0 2 * * *"},
//    "exec":{"type":"http","url":"http://orders.internal:8080/ax/order-stat"}}
import { axExecutorApp, createAxClient } from 'ax-scheduler-sdk';

/**
 * @param {{ keys: { team: string, keys: Record<number, string> }, adminApiUrl: string, log?: (line: string) => void }} options
 *   keys: this team's executor key(s), version → key, from GET /api/v1/teams/{team}/executor-key
 *     (never the master AX_EXECUTOR_SECRET); during a rotation hold the new and the previous one;
 *   adminApiUrl: where async results are reported, e.g. http://ax-admin:8080.
 */
export function createApp({ keys, adminApiUrl, log = () => {} }) {
  const client = createAxClient({ baseUrl: adminApiUrl, keys });

  return axExecutorApp({
    // Synchronous success: do the work within the request, answer the result.
    '/ax/order-stat': {
      keys,
      client,
      handler: async (ctx) => {
        // ctx.idempotencyKey is the same for every retry of this run: use it to skip work
        // that already happened (e.g. a unique key on the rows you write).
        log(`order-stat ${ctx.bizDate} attempt ${ctx.attempt} key ${ctx.idempotencyKey}`);
        const source = String(ctx.params.source ?? 'orders');
        return { success: true, message: `counted ${source} for ${ctx.bizDate}`, data: { bizDate: ctx.bizDate, rows: 42 } };
      },
    },

    // Synchronous failure: ax records the message and retries per the task's retry policy.
    // (Throwing an Error has the same effect: the answer is {success:false, message}.)
    '/ax/settle': {
      keys,
      client,
      handler: async (ctx) => {
        if (ctx.params.ledgerOpen !== true) return { success: false, message: `ledger for ${ctx.bizDate} is not open yet` };
        return { success: true };
      },
    },

    // Asynchronous: claim the run (one live execution per run, R18), answer 202 at once, do the
    // work in the background and report the outcome through the admin API.
    '/ax/export': {
      keys,
      client,
      handler: async (ctx) => {
        if (!(await ctx.claim())) return { success: false, message: 'another execution of this run holds the claim' };
        setTimeout(() => {
          const result = { success: true, message: 'export written', data: { file: `export-${ctx.bizDate}.csv` } };
          ctx.report(result).then(
            () => log(`reported ${ctx.executionId}`),
            (error) => log(`report of ${ctx.executionId} failed: ${error.message} (retry it; a repeat is answered duplicate)`),
          );
        }, Number(ctx.params.delayMs ?? 100));
        return ctx.accepted();
      },
    },
  });
}
