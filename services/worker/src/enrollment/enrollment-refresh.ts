/**
 * An enrolled worker asks admin-api for its enrollment again every `AX_WORKER_REFRESH_MS`
 * (ENROLLMENT-CONTRACT point 1), so what changes on the server reaches it without a restart:
 * rotated executor keys replace the held ones, changed teams change what it serves (still
 * narrowed by AX_WORKER_TEAMS), and a 401 — the enrollment was revoked — makes it stop
 * (`onRevoked`, once). An answer that cannot be had keeps the last one (logged); the loop never
 * throws (CONVENTIONS habit 6). `refreshNow` asks at once (a key version not held yet, the bus
 * connection lost), one request at a time.
 */
import { toError, type Logger } from '@ax/kit';
import { refreshedScope, type BootstrapAnswer, type TeamScope } from './bootstrap-answer.js';
import type { EnrollmentFetch } from './enrollment-client.js';

/** Options of `EnrollmentRefresh`. */
export interface EnrollmentRefreshOptions {
  /** The enrollment the worker's credential names: an answer for another one is not applied. */
  readonly enrollmentId: string;
  /** Asks admin-api once (`fetchEnrollment`). */
  readonly fetch: () => Promise<EnrollmentFetch>;
  /** `AX_WORKER_REFRESH_MS` (30000). */
  readonly intervalMs: number;
  /** `AX_WORKER_TEAMS` (empty: all of the enrollment's). */
  readonly requestedTeams: readonly string[];
  /** Applies a fresh answer: its keys and the teams served now. */
  readonly apply: (answer: BootstrapAnswer, scope: TeamScope) => void;
  /** The enrollment was revoked (admin-api answered 401). Called once; the loop stops. */
  readonly onRevoked: () => void;
  readonly logger: Logger;
}

/** The refresh loop of an enrolled worker. */
export class EnrollmentRefresh {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private revoked = false;

  constructor(private readonly options: EnrollmentRefreshOptions) {}

  /** Starts the periodic refresh (the first one after one interval). */
  start(): void {
    this.schedule();
  }

  /** Stops the loop; an ask in progress finishes but is not applied. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Asks now (joining an ask in progress); resolves when it is applied. Never rejects. */
  refreshNow(): Promise<void> {
    if (this.stopped || this.revoked) return Promise.resolve();
    this.running ??= this.once().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private schedule(): void {
    if (this.stopped || this.revoked) return;
    // ±10 % jitter: replicas of one enrollment do not ask in step.
    const delay = Math.round(this.options.intervalMs * (0.9 + Math.random() * 0.2));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refreshNow().finally(() => this.schedule());
    }, delay);
  }

  private async once(): Promise<void> {
    const { logger } = this.options;
    try {
      const got = await this.options.fetch();
      if (this.stopped) return;
      switch (got.kind) {
        case 'ok': {
          if (got.answer.enrollment.id !== this.options.enrollmentId) {
            logger.warn({ answered: got.answer.enrollment.id }, 'admin-api answered for another enrollment; keeping the last answer');
            return;
          }
          this.options.apply(got.answer, refreshedScope(got.answer.enrollment.teams, this.options.requestedTeams));
          return;
        }
        case 'unauthenticated':
          this.revoked = true;
          this.stop();
          this.options.onRevoked();
          return;
        default:
          logger.warn({ problem: got.problem }, 'could not refresh the enrollment; keeping the last answer');
      }
    } catch (error) {
      logger.error({ err: toError(error) }, 'enrollment refresh failed; keeping the last answer');
    }
  }
}
