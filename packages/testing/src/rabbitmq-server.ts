/**
 * A PRIVATE RabbitMQ node for tests that must stop the broker (outbox, restart and fault
 * drills): its own node name, AMQP and distribution ports and data directory in a temp dir,
 * so the machine's shared RabbitMQ is never touched. `stop()` then `start()` keep the data
 * (durable queues and persistent messages survive, as in a real restart).
 *
 * `startRabbitMqCluster()` starts several such nodes sharing one Erlang cookie and joins them
 * into a private cluster (`rabbitmqctl join_cluster`), for the drills that kill a node (#23).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, startProcess, type ManagedProcess } from './processes.js';

/** Debian's RabbitMQ server script. */
export const RABBITMQ_SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';
/** Debian's RabbitMQ CLI (the script itself, not `/usr/sbin`'s wrapper, which changes user). */
export const RABBITMQCTL = '/usr/lib/rabbitmq/bin/rabbitmqctl';

/**
 * Erlang VM flags of private nodes: no busy-waiting schedulers (they would spin on the cores
 * other tests use) and two schedulers; the nodes stay near 100 MiB each.
 */
const MODEST_ERL_ARGS = '+S 2:2 +sbwt none +sbwtdcpu none +sbwtdio none';

/**
 * `enabled_plugins` and the config file of a node: with `managementPort`, plugin
 * `rabbitmq_management` listening on 127.0.0.1 there (admin-api makes worker enrollments' users
 * through it); without, no plugin at all (the management plugin costs a few seconds of start-up
 * and memory, so only callers that need it ask for it).
 */
function writeNodeConfig(pluginsFile: string, configFile: string, managementPort: number | undefined): void {
  writeFileSync(pluginsFile, managementPort === undefined ? '[].\n' : '[rabbitmq_management].\n');
  // Without management the config file is not written: RabbitMQ runs with its defaults, as before.
  if (managementPort !== undefined) writeFileSync(configFile, `management.tcp.ip = 127.0.0.1\nmanagement.tcp.port = ${managementPort}\n`);
}

/** `http://guest:guest@127.0.0.1:<port>`: the management API with the node's default login. */
const managementUrlOf = (port: number | undefined): string | undefined => (port === undefined ? undefined : `http://guest:guest@127.0.0.1:${port}`);

/** Options of {@link startRabbitMq}. */
export interface RabbitMqOptions {
  readonly readyTimeoutMs?: number;
  /** Enable the management plugin on a free port (`managementUrl`); default false. */
  readonly management?: boolean;
}

/** A private node. */
export interface PrivateRabbitMq {
  /** `amqp://guest:guest@127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** `http://guest:guest@127.0.0.1:<port>` of the management API, when started with `management`. */
  readonly managementUrl?: string | undefined;
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
export async function startRabbitMq(options: RabbitMqOptions = {}): Promise<PrivateRabbitMq> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-rabbitmq-'));
  const port = await freePort();
  const distPort = await freePort();
  const managementPort = options.management === true ? await freePort() : undefined;
  writeNodeConfig(path.join(dir, 'enabled_plugins'), path.join(dir, 'node.conf'), managementPort);
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
        RABBITMQ_CONFIG_FILE: path.join(dir, 'node.conf'),
        RABBITMQ_ADVANCED_CONFIG_FILE: path.join(dir, 'none-advanced.config'),
        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: MODEST_ERL_ARGS,
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
    managementUrl: managementUrlOf(managementPort),
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

/** One node of a private cluster. */
export interface PrivateRabbitMqNode {
  /** Erlang node name, e.g. `ax_test_ab12_n0@localhost`. */
  readonly name: string;
  /** `amqp://guest:guest@127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** `http://guest:guest@127.0.0.1:<port>` of the node's management API, when started with `management`. */
  readonly managementUrl?: string | undefined;
  /** True while the node runs. */
  readonly running: boolean;
  /** Pid of the node's process group leader (the server script), while it runs. */
  readonly pid: number | undefined;
  /** Starts the node again with its data; it rejoins the cluster by itself. */
  start(): Promise<void>;
  /** Stops the node cleanly (SIGTERM, SIGKILL after 20 s). */
  stop(): Promise<void>;
  /** `kill -9` of the node (its whole process group); resolves once it is gone. */
  kill(): Promise<void>;
}

/** A private cluster. */
export interface PrivateRabbitMqCluster {
  readonly nodes: readonly PrivateRabbitMqNode[];
  /** The nodes' URLs, in order (what `AX_AMQP_URL` lists, comma-separated). */
  readonly urls: readonly string[];
  /** Runs `rabbitmqctl -n <node i> …args` with the cluster's cookie; resolves with stdout. */
  ctl(index: number, args: readonly string[], timeoutMs?: number): Promise<string>;
  /** Names of the running members, as node `index` sees them. */
  runningNodes(index?: number): Promise<string[]>;
  /** Stops every node and removes the data directories. */
  cleanup(): Promise<void>;
}

/** Options of {@link startRabbitMqCluster}. */
export interface RabbitMqClusterOptions {
  /** Number of nodes; default 3. */
  readonly size?: number;
  /** How long one node may take to start; default 90000 ms. */
  readonly readyTimeoutMs?: number;
  /** Enable the management plugin on every node, each on a free port; default false. */
  readonly management?: boolean;
}

const execFileAsync = promisify(execFile);

/**
 * Starts `size` private nodes that share an Erlang cookie (`HOME/.erlang.cookie` of a private
 * HOME) and joins nodes 1.. to node 0 (`stop_app`, `join_cluster`, `start_app`). Each node has
 * its own node name, AMQP and distribution ports, and `RABBITMQ_MNESIA_BASE` / `LOG_BASE`.
 * On a failure the nodes already started are stopped and removed before it rejects.
 */
export async function startRabbitMqCluster(options: RabbitMqClusterOptions = {}): Promise<PrivateRabbitMqCluster> {
  const size = options.size ?? 3;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-rabbitmq-cluster-'));
  const cookie = path.join(dir, '.erlang.cookie');
  writeFileSync(cookie, randomBytes(16).toString('hex').toUpperCase());
  chmodSync(cookie, 0o400);
  const base = `ax_test_${path.basename(dir).replace(/[^a-zA-Z0-9_]/g, '_')}`;
  const env = (nodeName: string): Record<string, string> => ({ HOME: dir, RABBITMQ_NODENAME: nodeName });

  const ctlOf = async (nodeName: string, args: readonly string[], timeoutMs = 60_000): Promise<string> => {
    try {
      const { stdout } = await execFileAsync(RABBITMQCTL, ['-n', nodeName, ...args], { env: { ...process.env, ...env(nodeName) }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
      return stdout;
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      throw new Error(`rabbitmqctl -n ${nodeName} ${args.join(' ')} failed: ${detail}`, { cause: error });
    }
  };

  const nodes: Array<PrivateRabbitMqNode & { readonly dir: string }> = [];
  for (let i = 0; i < size; i++) {
    const nodeDir = path.join(dir, `n${i}`);
    mkdirSync(nodeDir);
    const name = `${base}_n${i}@localhost`;
    const port = await freePort();
    const distPort = await freePort();
    const managementPort = options.management === true ? await freePort() : undefined;
    writeNodeConfig(path.join(nodeDir, 'enabled_plugins'), path.join(nodeDir, 'node.conf'), managementPort);
    let proc: ManagedProcess | undefined;
    const launch = async (): Promise<void> => {
      proc = await startProcess({
        name: `rabbitmq-n${i}`,
        command: RABBITMQ_SERVER,
        env: {
          ...env(name),
          RABBITMQ_NODE_PORT: String(port),
          RABBITMQ_DIST_PORT: String(distPort),
          RABBITMQ_MNESIA_BASE: path.join(nodeDir, 'mnesia'),
          RABBITMQ_LOG_BASE: path.join(nodeDir, 'log'),
          RABBITMQ_ENABLED_PLUGINS_FILE: path.join(nodeDir, 'enabled_plugins'),
          RABBITMQ_CONFIG_FILE: path.join(nodeDir, 'node.conf'),
          RABBITMQ_ADVANCED_CONFIG_FILE: path.join(nodeDir, 'none-advanced.config'),
          RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: MODEST_ERL_ARGS,
        },
        readyLine: /Starting broker\.\.\. completed/,
        readyTimeoutMs: options.readyTimeoutMs ?? 90_000,
      });
    };
    const halt = async (signal?: NodeJS.Signals): Promise<void> => {
      if (proc === undefined) return;
      const running = proc;
      proc = undefined;
      if (signal === 'SIGKILL') {
        running.kill('SIGKILL');
        await running.stop({ signal: 'SIGKILL', graceMs: 5_000 });
      } else {
        await running.stop({ graceMs: 20_000 });
      }
    };
    nodes.push({
      dir: nodeDir,
      name,
      url: `amqp://guest:guest@127.0.0.1:${port}`,
      port,
      managementUrl: managementUrlOf(managementPort),
      get running() {
        return proc !== undefined;
      },
      get pid() {
        return proc?.pid;
      },
      start: launch,
      stop: () => halt(),
      kill: () => halt('SIGKILL'),
    });
  }

  const cluster: PrivateRabbitMqCluster = {
    nodes,
    urls: nodes.map((n) => n.url),
    ctl: (index, args, timeoutMs) => ctlOf(nodeAt(nodes, index).name, args, timeoutMs),
    async runningNodes(index = 0) {
      const out = await ctlOf(nodeAt(nodes, index).name, ['cluster_status', '--formatter', 'json']);
      const status = JSON.parse(out) as { running_nodes?: string[] };
      return status.running_nodes ?? [];
    },
    async cleanup() {
      await Promise.all(nodes.map((n) => n.stop().catch(() => undefined)));
      rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    // Boot in parallel (each a one-node cluster), then join the others to node 0.
    await Promise.all(nodes.map((n) => n.start()));
    const first = nodeAt(nodes, 0);
    for (const node of nodes.slice(1)) {
      await ctlOf(node.name, ['stop_app']);
      await ctlOf(node.name, ['join_cluster', first.name]);
      await ctlOf(node.name, ['start_app']);
      await ctlOf(node.name, ['await_startup']);
    }
    const running = await cluster.runningNodes(0);
    if (running.length !== size) throw new Error(`cluster formed with ${running.length} of ${size} nodes running: ${running.join(', ')}`);
  } catch (error) {
    await cluster.cleanup();
    throw error;
  }
  return cluster;
}

function nodeAt<T>(nodes: readonly T[], index: number): T {
  const node = nodes[index];
  if (node === undefined) throw new RangeError(`no node ${index} (the cluster has ${nodes.length})`);
  return node;
}
