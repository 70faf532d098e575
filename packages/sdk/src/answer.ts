/**
 * What an executor endpoint answers (ADMIN-API.md "HTTP executors"), framework-neutral: a
 * status and a JSON body. Each adapter writes it in its framework's way.
 *
 * - `syncAnswer(result)`: 200 `{success, message?, data?}`, the synchronous result.
 * - `acceptedAnswer()`: 202 — the result is reported later (`createAxClient().report`).
 * - `errorAnswer(error)`: the refusal of a call that is not run (401 signature, 400 body, …).
 */
import type { AxResult } from './client.js';
import type { ExecutorCallError } from './execution.js';

/** A status and a JSON body to send (with `Content-Type: application/json`). */
export interface ExecutorAnswer {
  readonly status: number;
  readonly body: Readonly<Record<string, unknown>>;
}

/** 200 with the synchronous result; nothing (`undefined`) is `{success: true}`. */
export function syncAnswer(result?: AxResult): ExecutorAnswer {
  if (result === undefined) return { status: 200, body: { success: true } };
  if (typeof result !== 'object' || result === null || typeof result.success !== 'boolean') {
    return { status: 200, body: { success: false, message: 'the executor handler returned something other than {success, message?, data?}' } };
  }
  return { status: 200, body: { ...result } };
}

/** 202: accepted, the business reports the result later through the admin API. */
export function acceptedAnswer(): ExecutorAnswer {
  return { status: 202, body: { accepted: true } };
}

/** The refusal of a call: `{error: {code, message}}` with its status. */
export function errorAnswer(error: ExecutorCallError): ExecutorAnswer {
  return { status: error.status, body: { error: { code: error.code, message: error.message } } };
}
