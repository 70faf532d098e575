// @ax/sdk: what business teams use to receive ax HTTP executions and report async results.
export { axExecutor, axExecutorApp, executionRequestSchema } from './executor.js';
export type { Accepted, AxExecutorOptions, ExecutionContext, ExecutionRequestBody, HandlerResult } from './executor.js';
export { AxApiError, createAxClient } from './client.js';
export type { AxClient, AxClientOptions, AxResult } from './client.js';
export { DEFAULT_MAX_SKEW_MS, signBody, signedHeaders, verifySignature } from './signature.js';
export type { SignatureProblem } from './signature.js';
