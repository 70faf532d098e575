/**
 * R14: brokers suspend lease and ACK expiry while their own AMQP or MySQL link is down and for
 * one lease period after it returns. This tracks both links.
 */

/** Health of this broker's links. */
export class LinkMonitor {
  private amqpUp = true;
  private mysqlUp = true;
  private lastRecoveryMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly leaseTtlMs: number,
    private readonly nowMs: () => number = () => performance.now(),
  ) {}

  /** AMQP connected or not (bus events). */
  setAmqp(up: boolean): void {
    if (up && !this.amqpUp) this.lastRecoveryMs = this.nowMs();
    this.amqpUp = up;
  }

  /** A MySQL call succeeded or failed with a connection error. */
  setMysql(up: boolean): void {
    if (up && !this.mysqlUp) this.lastRecoveryMs = this.nowMs();
    this.mysqlUp = up;
  }

  /** Whether ACK and lease expiry must wait. */
  get expirySuspended(): boolean {
    return !this.amqpUp || !this.mysqlUp || this.nowMs() - this.lastRecoveryMs < this.leaseTtlMs;
  }
}
