/**
 * The error body of the admin API (ADMIN-API.md "Conventions"):
 * `{"error":{"code":"<UPPER_SNAKE>","message":"<one sentence>","details":{…}}}`, and the
 * express error middleware that turns anything thrown into it — never a stack trace, never
 * SQL text, never a 500 for bad input.
 */
import type { ErrorRequestHandler, Response } from 'express';
import { capIssues, CycleError, ValidationError, toError, type Issue } from '@ax/core';
import { isLockConflict, TaskExistsError, TaskVersionConflictError, TeamExistsError, TeamInUseError, TeamMissingError, TokenNameTakenError } from '@ax/store';
import type { Logger } from '@ax/kit';

/** An error with an HTTP status and a contract error code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * 400 `VALIDATION_FAILED` with `details.issues`: at most `MAX_REPORTED_ISSUES` of them, then one
 * saying the rest were left out (#45: a body wrong in 10,000 places need not be answered 10,000 times).
 */
export function validationFailed(issues: readonly Issue[], subject = 'request'): ApiError {
  const shown = issues.slice(0, 3).map((i) => i.message).join('; ');
  return new ApiError(400, 'VALIDATION_FAILED', `invalid ${subject}${shown === '' ? '' : `: ${shown}`}`, {
    issues: capIssues(issues).map((i) => ({ ...i })),
  });
}

/** 404 `NOT_FOUND`. */
export function notFound(what: string): ApiError {
  return new ApiError(404, 'NOT_FOUND', `${what} does not exist`);
}

/** 409 `INVALID_STATE`. */
export function invalidState(message: string, details: Record<string, unknown> = {}): ApiError {
  return new ApiError(409, 'INVALID_STATE', message, details);
}

/** Seconds a caller is asked to wait after a lock conflict that outlasted the retries. */
export const LOCK_CONFLICT_RETRY_AFTER_SECONDS = 1;

/**
 * 503 `UNAVAILABLE` with `Retry-After`: the request's transaction lost its lock race
 * (deadlock or lock wait timeout) `attempts` times and was rolled back each time; nothing was
 * written and the same request may simply be sent again. Not a 500: the request is fine.
 */
export function lockConflictUnavailable(attempts: number): ApiError {
  return new ApiError(
    503,
    'UNAVAILABLE',
    `the database kept choosing this request as the loser of a lock conflict (${attempts} attempts); nothing was written, send it again`,
    { reason: 'LOCK_CONFLICT', attempts },
    { 'retry-after': String(LOCK_CONFLICT_RETRY_AFTER_SECONDS) },
  );
}

/** The JSON error body. */
export function errorBody(code: string, message: string, details: Record<string, unknown> = {}): { error: { code: string; message: string; details: Record<string, unknown> } } {
  return { error: { code, message, details } };
}

interface HttpLikeError {
  status?: unknown;
  statusCode?: unknown;
  type?: unknown;
  expose?: unknown;
}

/** Maps anything thrown to an {@link ApiError}; unknown errors become 500 `INTERNAL`. */
export function toApiError(thrown: unknown): { error: ApiError; internal: boolean } {
  if (thrown instanceof ApiError) return { error: thrown, internal: false };
  if (thrown instanceof ValidationError) return { error: validationFailed(thrown.issues), internal: false };
  if (thrown instanceof CycleError) {
    return { error: new ApiError(409, 'CYCLE', thrown.message, { cycle: [...thrown.cycle] }), internal: false };
  }
  if (thrown instanceof TaskExistsError) {
    return { error: new ApiError(409, 'ALREADY_EXISTS', thrown.message, { name: thrown.taskName }), internal: false };
  }
  if (thrown instanceof TeamMissingError) return { error: notFound(`team ${JSON.stringify(thrown.team)}`), internal: false };
  if (thrown instanceof TeamExistsError) {
    return { error: new ApiError(409, 'ALREADY_EXISTS', thrown.message, { name: thrown.team }), internal: false };
  }
  if (thrown instanceof TeamInUseError) {
    return { error: invalidState(`team ${JSON.stringify(thrown.team)} owns tasks; move or delete them first`, { team: thrown.team }), internal: false };
  }
  if (thrown instanceof TokenNameTakenError) {
    return { error: new ApiError(409, 'ALREADY_EXISTS', `a live token named ${JSON.stringify(thrown.tokenName)} exists; token names are unique`, { name: thrown.tokenName }), internal: false };
  }
  if (thrown instanceof TaskVersionConflictError) {
    if (thrown.actualVersion === null) return { error: notFound(`task ${JSON.stringify(thrown.taskName)}`), internal: false };
    return {
      error: new ApiError(409, 'VERSION_CONFLICT', thrown.message, {
        expectedVersion: thrown.expectedVersion,
        currentVersion: thrown.actualVersion,
      }),
      internal: false,
    };
  }
  // A write outside writeTransaction, or a read under a lock: still a "retry it", never a 500.
  if (isLockConflict(thrown)) return { error: lockConflictUnavailable(1), internal: false };
  // Errors of express's body readers (raw-body / http-errors): 400, 413, 415.
  const http = thrown as HttpLikeError;
  const status = typeof http?.status === 'number' ? http.status : typeof http?.statusCode === 'number' ? http.statusCode : undefined;
  if (status !== undefined && status >= 400 && status < 500) {
    if (status === 413) return { error: new ApiError(413, 'PAYLOAD_TOO_LARGE', 'the request body is over the size limit'), internal: false };
    if (status === 415) return { error: new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'the request body has an unsupported encoding or charset'), internal: false };
    return {
      error: new ApiError(400, 'VALIDATION_FAILED', 'the request body could not be read', {
        issues: [{ path: '', message: 'the request body could not be read' }],
      }),
      internal: false,
    };
  }
  return { error: new ApiError(500, 'INTERNAL', 'an internal error occurred; it has been logged'), internal: true };
}

/** Sends an error reply. */
export function sendError(res: Response, error: ApiError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json(errorBody(error.code, error.message, error.details));
}

/** The last middleware of the app. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (thrown: unknown, req, res, next) => {
    if (res.headersSent) {
      next(thrown);
      return;
    }
    const { error, internal } = toApiError(thrown);
    if (internal) logger.error({ err: toError(thrown), method: req.method, path: req.path }, 'request failed');
    sendError(res, error);
  };
}
