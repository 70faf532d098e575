// @ax/sdk: what business teams use to receive ax HTTP executions and report async results.
export { axExecutor, axExecutorApp, executionRequestSchema } from './executor.js';
export type { Accepted, AxExecutorOptions, ExecutionContext, ExecutionRequestBody, HandlerResult } from './executor.js';
export { AxApiError, createAxClient } from './client.js';
export type { AxClient, AxClientOptions, AxResult } from './client.js';
export { currentVersion, DEFAULT_MAX_SKEW_MS, signedHeaders, signV2, verifySignature } from './signature.js';
export type { ReceivedSignature, SignatureProblem, SignedRequest, TeamKeys } from './signature.js';
