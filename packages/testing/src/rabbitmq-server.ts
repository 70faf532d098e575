/**
 * A PRIVATE RabbitMQ node for tests that must stop the broker (outbox, restart and fault
 * drills): its own node name, AMQP and distribution ports and data directory in a temp dir,
 * so the machine's shared RabbitMQ is never touched. `stop()` then `start()` keep the data
 * (durable queues and persistent messages survive, as in a real restart).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startProcess, type ManagedProcess } from './processes.js';

/** Debian's RabbitMQ server script. */
export const RABBITMQ_SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';

/** A private node. */
export interface PrivateRabbitMq {
  /** `amqp://guest:guest@127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** True while the node runs. */
  readonly running: boolean;
  /** Starts the node again on the same ports and data (after `stop()`). */
  start(): Promise<void>;
  /** Stops the node cleanly (SIGTERM, SIGKILL after 20 s). */
  stop(): Promise<void>;
  /** Stops the node if running and removes its data directory. */
  cleanup(): Promise<void>;
}

/** True when this machine can run a private node. */
export function canRunRabbitMq(): boolean {
  return existsSync(RABBITMQ_SERVER);
}

/** Starts a private RabbitMQ node and waits until it accepts connections. */
export async function startRabbitMq(options: { readyTimeoutMs?: number } = {}): Promise<PrivateRabbitMq> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-rabbitmq-'));
  writeFileSync(path.join(dir, 'enabled_plugins'), '[].\n');
  const port = await freePort();
  const distPort = await freePort();
  const nodeName = `ax_test_${path.basename(dir).replace(/[^a-zA-Z0-9_]/g, '_')}@localhost`;
  let proc: ManagedProcess | undefined;

  const launch = async (): Promise<void> => {
    proc = await startProcess({
      name: 'rabbitmq-private',
      command: RABBITMQ_SERVER,
      env: {
        HOME: dir,
        RABBITMQ_NODENAME: nodeName,
        RABBITMQ_NODE_PORT: String(port),
        RABBITMQ_DIST_PORT: String(distPort),
        RABBITMQ_MNESIA_BASE: path.join(dir, 'mnesia'),
        RABBITMQ_LOG_BASE: path.join(dir, 'log'),
        RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, 'enabled_plugins'),
        RABBITMQ_CONFIG_FILE: path.join(dir, 'none'),
        RABBITMQ_ADVANCED_CONFIG_FILE: path.join(dir, 'none-advanced.config'),
      },
      readyLine: /Starting broker\.\.\. completed/,
      readyTimeoutMs: options.readyTimeoutMs ?? 90_000,
    });
  };
  const halt = async (): Promise<void> => {
    if (proc === undefined) return;
    const running = proc;
    proc = undefined;
    await running.stop({ graceMs: 20_000 });
  };

  await launch();
  return {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    port,
    get running() {
      return proc !== undefined;
    },
    start: launch,
    stop: halt,
    cleanup: async () => {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
