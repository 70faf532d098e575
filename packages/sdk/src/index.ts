// ax-scheduler-sdk: what business teams use to receive ax HTTP executions and report async results.
// Framework-neutral; the adapters have their own entry points: ax-scheduler-sdk/express, ax-scheduler-sdk/fastify,
// ax-scheduler-sdk/koa, ax-scheduler-sdk/nest.
export { executionRequestSchema, ExecutorCallError, headerValue, verifyExecutorCall } from './execution.js';
export type { ExecutionCall, ExecutionRequestBody, ExecutorCallErrorCode, HeaderSource, VerifyExecutorCallInput, VerifyExecutorCallResult } from './execution.js';
export { acceptedAnswer, errorAnswer, syncAnswer } from './answer.js';
export type { ExecutorAnswer } from './answer.js';
export { createExecutorHandler, DEFAULT_BODY_LIMIT_BYTES } from './handler.js';
export type { Accepted, AxExecutorOptions, ExecutionContext, ExecutorHandler, HandlerResult, IncomingExecutorCall, ResolvedExecutorOptions } from './handler.js';
export { axExecutorApp } from './node.js';
export { AxConfigError, resolveKeys } from './keys.js';
export type { ExecutorKey, ExecutorKeys } from './keys.js';
export { AxApiError, createAxClient } from './client.js';
export type { AxClient, AxClientOptions, AxResult } from './client.js';
export { currentVersion, DEFAULT_MAX_SKEW_MS, signedHeaders, signV2, verifySignature } from './signature.js';
export type { ReceivedSignature, SignatureProblem, SignedRequest, TeamKeys } from './signature.js';
export { parseTraceparent } from './trace.js';
export type { AxTraceContext } from './trace.js';
