/**
 * A RabbitMQ connection for one test file's namespace, and cleanup of every queue and exchange
 * named `<ns>.*`. The test RabbitMQ has no management plugin, so names are listed with
 * `rabbitmqctl` (about a second per call; both lists run in parallel) and deleted over AMQP.
 * Names outside the namespace are never touched.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { connect, type Channel, type ChannelModel } from 'amqplib';

const execFileAsync = promisify(execFile);

/** Default RabbitMQ of the test environment: `AX_AMQP_URL` or the local server. */
export function testAmqpUrl(): string {
  const fromEnv = process.env.AX_AMQP_URL?.trim();
  return fromEnv ? fromEnv : 'amqp://guest:guest@127.0.0.1:5672';
}

/** The virtual host named by an AMQP URL (`/` when the path is empty). */
export function amqpVhost(url: string): string {
  const path = new URL(url).pathname.replace(/^\//, '');
  return path === '' ? '/' : decodeURIComponent(path);
}

/** A connection, a channel, and the cleanup of the namespace. */
export interface TestAmqp {
  readonly url: string;
  readonly namespace: string;
  readonly connection: ChannelModel;
  readonly channel: Channel;
  /**
   * Closes the connection (so exclusive and auto-delete queues go), then deletes every queue
   * and exchange named `<ns>.*` and returns their names. Idempotent.
   */
  cleanup(): Promise<AmqpNames>;
}

/** Queue and exchange names. */
export interface AmqpNames {
  readonly queues: readonly string[];
  readonly exchanges: readonly string[];
}

async function rabbitmqctl(args: readonly string[]): Promise<string[]> {
  const command = process.env.AX_RABBITMQCTL?.trim() || 'rabbitmqctl';
  try {
    const { stdout } = await execFileAsync(command, [...args], { timeout: 30_000, maxBuffer: 64 * 1024 * 1024 });
    return stdout.split('\n').filter((line) => line !== '');
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(`${command} ${args.join(' ')} failed (is RabbitMQ local and rabbitmqctl on PATH?): ${detail}`, {
      cause: error,
    });
  }
}

/** Lists every queue and exchange name on the vhost of `url` (two `rabbitmqctl` calls in parallel). */
export async function listAmqpNames(url: string = testAmqpUrl()): Promise<AmqpNames> {
  const vhost = amqpVhost(url);
  const [queues, exchanges] = await Promise.all([
    rabbitmqctl(['list_queues', '-q', '--no-table-headers', '-p', vhost, 'name']),
    rabbitmqctl(['list_exchanges', '-q', '--no-table-headers', '-p', vhost, 'name']),
  ]);
  return { queues, exchanges };
}

/** Keeps the names of `<ns>.*`. */
export function namesInNamespace(names: AmqpNames, namespace: string): AmqpNames {
  const prefix = `${namespace}.`;
  return {
    queues: names.queues.filter((n) => n.startsWith(prefix)),
    exchanges: names.exchanges.filter((n) => n.startsWith(prefix)),
  };
}

/** Lists the queues and exchanges named `<ns>.*` on the vhost of `url`. */
export async function listNamespaceAmqp(namespace: string, url: string = testAmqpUrl()): Promise<AmqpNames> {
  if (!/^[a-z0-9_.-]+$/.test(namespace)) throw new Error(`invalid namespace ${JSON.stringify(namespace)}`);
  return namesInNamespace(await listAmqpNames(url), namespace);
}

/**
 * Deletes the RabbitMQ users of worker enrollments of `namespace` (`<ns>.enr-…`, DESIGN R24)
 * that a test's admin API made and did not revoke (a stack killed mid-test, say). Returns them.
 */
export async function deleteNamespaceEnrollmentUsers(namespace: string): Promise<string[]> {
  const prefix = `${namespace}.enr-`;
  const users = (await rabbitmqctl(['list_users', '-q', '--no-table-headers'])).map((line) => line.split('\t')[0] ?? '').filter((u) => u.startsWith(prefix));
  for (const user of users) await rabbitmqctl(['delete_user', user]).catch(() => undefined); // gone meanwhile: fine
  return users;
}

/**
 * Deletes every queue and exchange named `<ns>.*` (over a connection of its own) and the
 * namespace's enrollment users, and returns the names found. Throws, after trying them all, if
 * any queue or exchange could not be deleted.
 */
export async function deleteNamespaceAmqp(namespace: string, url: string = testAmqpUrl()): Promise<AmqpNames> {
  await deleteNamespaceEnrollmentUsers(namespace);
  const names = await listNamespaceAmqp(namespace, url);
  if (names.queues.length === 0 && names.exchanges.length === 0) return names;
  const connection = await connect(url);
  const failures: string[] = [];
  connection.on('error', (error: Error) => failures.push(`connection: ${error.message}`));
  try {
    let channel: Channel | undefined;
    // A failed delete (an exclusive queue of a live connection) closes the channel: open anew.
    const attempt = async (what: string, op: (ch: Channel) => Promise<unknown>): Promise<void> => {
      try {
        if (!channel) {
          channel = await connection.createChannel();
          channel.on('error', () => undefined); // reported through the rejected operation below
        }
        await op(channel);
      } catch (error) {
        channel = undefined;
        failures.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
      }
    };
    for (const q of names.queues) await attempt(`queue ${q}`, (ch) => ch.deleteQueue(q));
    for (const x of names.exchanges) await attempt(`exchange ${x}`, (ch) => ch.deleteExchange(x));
  } finally {
    await connection.close().catch(() => undefined);
  }
  if (failures.length > 0) throw new Error(`AMQP cleanup of ${namespace} failed: ${failures.join('; ')}`);
  return names;
}

/** Connects to the test RabbitMQ (default `testAmqpUrl()`); call `cleanup()` in `afterAll`. */
export async function createTestAmqp(namespace: string, options: { url?: string } = {}): Promise<TestAmqp> {
  const url = options.url ?? testAmqpUrl();
  const connection = await connect(url);
  // A connection-level error also closes it; the test sees it through its failing calls.
  connection.on('error', () => undefined);
  const channel = await connection.createChannel();
  channel.on('error', () => undefined);
  let cleaned: Promise<AmqpNames> | undefined;
  return {
    url,
    namespace,
    connection,
    channel,
    cleanup: () => {
      cleaned ??= (async () => {
        await connection.close().catch(() => undefined); // already closed by a test or an error
        return deleteNamespaceAmqp(namespace, url);
      })();
      return cleaned;
    },
  };
}
