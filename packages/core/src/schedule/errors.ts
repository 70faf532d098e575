import { AxError } from '../errors.js';

/**
 * A schedule definition that cannot be compiled (code `INVALID_SCHEDULE`); `message` is one
 * human sentence naming the field at fault, the same one `scheduleProblem` returns.
 */
export class InvalidScheduleError extends AxError {
  constructor(message: string) {
    super('INVALID_SCHEDULE', message);
  }
}
