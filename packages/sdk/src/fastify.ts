/**
 * `ax-scheduler-sdk/fastify`: the executor as a fastify plugin (fastify 4 and 5). The plugin is
 * encapsulated (not wrapped with fastify-plugin): inside it the content type parsers are
 * replaced by one that keeps the body as a Buffer, so only the executor's route receives raw
 * bytes and the rest of the app keeps fastify's JSON parsing.
 *
 * ```ts
 * import { axFastify } from 'ax-scheduler-sdk/fastify';
 * await app.register(axFastify({ path: '/ax/order-stat', keys, handler: async (ctx) => ({ success: true }) }));
 * ```
 */
import type { FastifyPluginCallback } from 'fastify';
import { createExecutorHandler, type AxExecutorOptions } from './handler.js';

// The core's types, so one import serves an app using this adapter.
export type { Accepted, AxExecutorOptions, ExecutionContext, HandlerResult } from './handler.js';
export type { AxClient, AxResult } from './client.js';
export type { ExecutionCall } from './execution.js';
export type { ExecutorKey, ExecutorKeys } from './keys.js';

/** Options of `axFastify`: the executor's and its route. */
export interface AxFastifyOptions extends AxExecutorOptions {
  /** The route, e.g. `/ax/order-stat` (under the `prefix` the plugin is registered with, if any). */
  readonly path: string;
}

/** A fastify plugin serving one executor at `POST <path>`. */
export function axFastify(options: AxFastifyOptions): FastifyPluginCallback {
  const executor = createExecutorHandler(options, 'axFastify (ax-scheduler-sdk/fastify)');
  if (typeof options.path !== 'string' || !options.path.startsWith('/')) throw new Error(`axFastify: \`path\` must start with '/', got ${JSON.stringify(options.path)}`);
  const bodyLimit = executor.options.bodyLimitBytes;
  return (instance, _pluginOptions, done) => {
    // Scoped to this plugin's context: the app's other routes keep their parsers.
    instance.removeAllContentTypeParsers();
    instance.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, parsed) => parsed(null, body));
    instance.post(options.path, { bodyLimit }, async (request, reply) => {
      const hangUp = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) hangUp.abort(new Error('the worker hung up'));
      });
      const body = request.body;
      const answer = await executor.handle({
        rawBody: Buffer.isBuffer(body) || typeof body === 'string' ? body : '',
        headers: request.headers,
        method: request.method,
        // the URL as received (with its query): the signature covers it
        path: request.raw.url ?? request.url,
        hangUp: hangUp.signal,
      });
      return reply.code(answer.status).type('application/json; charset=utf-8').send(answer.body);
    });
    done();
  };
}
