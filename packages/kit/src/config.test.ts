import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { axConfigFields, axServiceFields, httpPortField } from './ax-config.js';
import { ConfigError, loadConfig, loadConfigOrExit, maskUrlPassword, pickFields } from './config.js';
import { intField } from './env-fields.js';

/** Runs loadConfigOrExit with injected io; returns what it wrote and the exit code. */
function runOrExit(env: Record<string, string>): { lines: string[]; code: number | undefined } {
  const written: string[] = [];
  let code: number | undefined;
  try {
    loadConfigOrExit(axServiceFields('broker'), env, {
      writeError: (text) => written.push(text),
      exit: (c) => {
        code = c;
      },
    });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
  }
  return { lines: written.join('').split('\n').filter((l) => l !== ''), code };
}

describe('loadConfig', () => {
  it('resolves every DESIGN §8 default from an empty environment', () => {
    const config = loadConfig(axServiceFields('scheduler'), {}, { cwd: '/srv/ax' });
    expect(config).toMatchObject({
      mysqlUrl: 'mysql://root@127.0.0.1:3306/ax',
      redisUrl: 'redis://127.0.0.1:6379',
      amqpUrl: ['amqp://guest:guest@127.0.0.1:5672'],
      amqpManagementUrl: undefined,
      namespace: 'ax',
      httpPort: 9101,
      logLevel: 'info',
      adminToken: undefined,
      executorSecret: undefined,
      workerTags: [],
      httpExecutorAllow: ['*'],
      alertWebhookUrl: undefined,
      dispatchRatePerSecond: undefined,
      retentionDays: 30,
      pluginDir: '/srv/ax/plugins',
      shutdownGraceSeconds: 30,
      ackTimeoutMs: 5000,
      maxReroutes: 3,
      heartbeatIntervalMs: 5000,
      leaseTtlMs: 15000,
      lostWorkerGraceMs: 10000,
      maxLostRedispatches: 3,
      fireLockTtlMs: 30000,
      misfireThresholdMs: 5000,
      workerSkewLimitMs: 2000,
      schedulerSkewLimitMs: 2000,
      noWorkerAlertMs: 60000,
      backoffCapMs: 3600000,
      dependencyTimeoutSeconds: 86400,
      hmacWindowMs: 300000,
      outputTailBytes: 65536,
      requestBodyLimitBytes: 1048576,
    });
    expect(config.workerId).toMatch(new RegExp(`-${process.pid}$`));
    expect(config.workerSlots).toBeGreaterThanOrEqual(4);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('gives each service its own default port', () => {
    expect(loadConfig(axServiceFields('admin-api'), {}).httpPort).toBe(8080);
    expect(loadConfig(axServiceFields('broker'), {}).httpPort).toBe(9102);
    expect(loadConfig(axServiceFields('worker'), {}).httpPort).toBe(9103);
    expect(loadConfig(axServiceFields('worker'), { AX_HTTP_PORT: '0' }).httpPort).toBe(0);
  });

  it('parses set values', () => {
    const config = loadConfig(axServiceFields('worker'), {
      AX_NAMESPACE: 'team-a.prod_1',
      AX_ACK_TIMEOUT_MS: ' 2500 ',
      AX_MAX_REROUTES: '0',
      AX_WORKER_TAGS: 'gpu, linux,,gpu ',
      AX_WORKER_SLOTS: '3',
      AX_HTTP_EXECUTOR_ALLOW: 'API.example.com,*.internal:8443',
      AX_DISPATCH_RATE: '12.5',
      AX_SHUTDOWN_GRACE_S: '0.5',
      AX_LOG_LEVEL: 'DEBUG',
      AX_ADMIN_TOKEN: 'x'.repeat(32),
      AX_PLUGIN_DIR: '/opt/plugins',
      AX_MYSQL_URL: 'mariadb://ax:p%40ss@db.internal:3307/ax_test',
      AX_REDIS_URL: 'rediss://:pw@redis:6380/2',
      AX_AMQP_URL: 'amqps://u:p@rabbit/%2Fprod',
      AX_ALERT_WEBHOOK_URL: 'https://hooks.example/T0KEN',
      AX_WORKER_ID: 'Worker_7.eu-1',
      AX_EXECUTOR_SECRET: 's'.repeat(16),
    });
    expect(config).toMatchObject({
      namespace: 'team-a.prod_1',
      ackTimeoutMs: 2500,
      maxReroutes: 0,
      workerTags: ['gpu', 'linux'],
      workerSlots: 3,
      httpExecutorAllow: ['api.example.com', '*.internal:8443'],
      dispatchRatePerSecond: 12.5,
      shutdownGraceSeconds: 0.5,
      logLevel: 'debug',
      adminToken: 'x'.repeat(32),
      pluginDir: '/opt/plugins',
      mysqlUrl: 'mariadb://ax:p%40ss@db.internal:3307/ax_test',
      redisUrl: 'rediss://:pw@redis:6380/2',
      amqpUrl: ['amqps://u:p@rabbit/%2Fprod'],
      alertWebhookUrl: 'https://hooks.example/T0KEN',
      workerId: 'Worker_7.eu-1',
      executorSecret: 's'.repeat(16),
    });
    expect(loadConfig(axServiceFields('broker'), { AX_MAX_REROUTES: '-0' }).maxReroutes).toBe(0);
  });

  it('#23 AX_AMQP_URL takes the nodes of a RabbitMQ cluster, comma-separated, in order', () => {
    const fields = pickFields(axConfigFields, ['amqpUrl']);
    expect(loadConfig(fields, { AX_AMQP_URL: 'amqp://ax:pw@r0:5672, amqp://ax:pw@r1:5672 ,,amqps://ax:pw@r2:5671/ax,amqp://ax:pw@r0:5672' }).amqpUrl).toEqual([
      'amqp://ax:pw@r0:5672',
      'amqp://ax:pw@r1:5672',
      'amqps://ax:pw@r2:5671/ax',
    ]);
    expect(loadConfig(fields, { AX_AMQP_URL: 'amqp://r0' }).amqpUrl).toEqual(['amqp://r0']);
  });

  it('#23 a bad node of AX_AMQP_URL is named by its place, its password and the others\' masked', () => {
    const { lines, code } = runOrExit({ AX_AMQP_URL: 'amqp://ax:s3cret@r0:5672,http://ax:s3cret@r1:5672' });
    expect(code).toBe(2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('s3cret');
    expect(lines[0]).toContain('is invalid: node 2 of 2');
    expect(lines[0]).toContain('expected a amqp:// or amqps:// URL');
  });

  it('#23 with NODE_ENV=production a placeholder password in any node of AX_AMQP_URL is refused', () => {
    const fields = pickFields(axConfigFields, ['amqpUrl']);
    expect(() => loadConfig(fields, { NODE_ENV: 'production', AX_AMQP_URL: 'amqp://ax:Pw9Tq2Lk7Xv4@r0:5672,amqp://ax:CHANGE_ME@r1:5672' })).toThrow(
      /node 2 of 2 \(amqp:\/\/ax:\*\*\*@r1:5672\): its password is/,
    );
  });

  it('#44 AX_AMQP_MANAGEMENT_URL takes an http(s) URL, from a file too, and masks its password when it is wrong', () => {
    expect(loadConfig(axServiceFields('admin-api'), { AX_AMQP_MANAGEMENT_URL: 'https://ax-admin:pw@rabbit:15671' }).amqpManagementUrl).toBe('https://ax-admin:pw@rabbit:15671');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-mgmt-'));
    try {
      writeFileSync(path.join(dir, 'url'), 'http://ax-admin:from-file@rabbit:15672\n', { mode: 0o600 });
      expect(loadConfig(axServiceFields('admin-api'), { AX_AMQP_MANAGEMENT_URL_FILE: path.join(dir, 'url') }).amqpManagementUrl).toBe('http://ax-admin:from-file@rabbit:15672');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const { lines, code } = runOrExit({ AX_AMQP_MANAGEMENT_URL: 'amqp://ax-admin:s3cret@rabbit:5672' });
    expect(code).toBe(2);
    expect(lines.join('\n')).toContain('AX_AMQP_MANAGEMENT_URL');
    expect(lines.join('\n')).not.toContain('s3cret');
  });

  it('treats an empty or blank variable as unset', () => {
    const config = loadConfig(axServiceFields('broker'), { AX_ACK_TIMEOUT_MS: '', AX_NAMESPACE: '  ', AX_ADMIN_TOKEN: '' });
    expect(config.ackTimeoutMs).toBe(5000);
    expect(config.namespace).toBe('ax');
    expect(config.adminToken).toBeUndefined();
  });

  it('lets a service pick fields and add its own', () => {
    const fields = {
      ...pickFields(axConfigFields, ['redisUrl', 'ackTimeoutMs']),
      httpPort: httpPortField('broker'),
      batchSize: intField({ env: 'AX_BROKER_BATCH', unit: 'count', default: 50 }),
    };
    const config = loadConfig(fields, { AX_BROKER_BATCH: '7', AX_RETENTION_DAYS: 'not checked: not picked' });
    expect(config).toEqual({ redisUrl: 'redis://127.0.0.1:6379', ackTimeoutMs: 5000, httpPort: 9102, batchSize: 7 });
  });

  it('every service accepts the worker allow-list syntax (internal: names, CIDR ranges, [IPv6]) from a shared config', () => {
    const allow = 'internal:orders.internal:8080,10.1.2.0/24,10.9.0.0/16:8443,[fd00::/8],[::1]:9000,*.jobs.example.com';
    for (const service of ['scheduler', 'broker', 'admin-api', 'worker'] as const) {
      expect(loadConfig(axServiceFields(service), { AX_HTTP_EXECUTOR_ALLOW: allow }).httpExecutorAllow).toHaveLength(6);
    }
  });

  it('requires AX_HTTP_EXECUTOR_ALLOW in production', () => {
    expect(() => loadConfig(axServiceFields('worker'), { NODE_ENV: 'production' })).toThrow(
      'ax: AX_HTTP_EXECUTOR_ALLOW is not set: required when NODE_ENV=production',
    );
    const config = loadConfig(axServiceFields('worker'), { NODE_ENV: 'production', AX_HTTP_EXECUTOR_ALLOW: 'a.example' });
    expect(config.httpExecutorAllow).toEqual(['a.example']);
  });
});

describe('loadConfigOrExit', () => {
  const bad: Array<[variable: string, value: string, problem: string]> = [
    ['AX_ACK_TIMEOUT_MS', 'abc', 'expected a positive integer (milliseconds)'],
    ['AX_ACK_TIMEOUT_MS', '0', 'expected a positive integer (milliseconds)'],
    ['AX_ACK_TIMEOUT_MS', '1.5', 'expected a positive integer (milliseconds)'],
    ['AX_MAX_REROUTES', '-1', 'expected a non-negative integer'],
    ['AX_HEARTBEAT_INTERVAL_MS', '5s', 'expected a positive integer (milliseconds)'],
    ['AX_LEASE_TTL_MS', 'x', 'milliseconds'],
    ['AX_LOST_WORKER_GRACE_MS', 'x', 'milliseconds'],
    ['AX_MAX_LOST_REDISPATCHES', 'many', 'non-negative integer'],
    ['AX_FIRE_LOCK_TTL_MS', 'x', 'milliseconds'],
    ['AX_MISFIRE_THRESHOLD_MS', 'x', 'milliseconds'],
    ['AX_WORKER_SKEW_LIMIT_MS', 'x', 'milliseconds'],
    ['AX_SCHEDULER_SKEW_LIMIT_MS', 'x', 'milliseconds'],
    ['AX_NO_WORKER_ALERT_MS', 'x', 'milliseconds'],
    ['AX_BACKOFF_CAP_MS', 'x', 'milliseconds'],
    ['AX_DEPENDENCY_TIMEOUT_S', '1h', 'expected a positive integer (seconds)'],
    ['AX_HMAC_WINDOW_MS', 'x', 'milliseconds'],
    ['AX_OUTPUT_TAIL_BYTES', '64k', 'expected a positive integer (bytes)'],
    ['AX_REQUEST_BODY_LIMIT_BYTES', '1MiB', 'expected a positive integer (bytes)'],
    ['AX_MYSQL_URL', 'postgres://db/ax', 'expected a mysql:// or mariadb:// URL with a database name'],
    ['AX_MYSQL_URL', 'mysql://127.0.0.1:3306', 'with a database name'],
    ['AX_REDIS_URL', '127.0.0.1:6379', 'expected a redis:// or rediss:// URL'],
    ['AX_AMQP_URL', 'http://rabbit', 'expected a amqp:// or amqps:// URL'],
    ['AX_AMQP_URL', 'amqp://r0:5672,http://r1:5672,amqp://r2:5672', 'node 2 of 3 (http://r1:5672): expected a amqp:// or amqps:// URL'],
    ['AX_AMQP_URL', ' , ', 'no URL in the list'],
    ['AX_NAMESPACE', 'Team A', 'lower-case letters, digits'],
    ['AX_NAMESPACE', 'a:b', 'lower-case letters, digits'],
    ['AX_HTTP_PORT', '70000', 'expected an integer from 0 to 65535'],
    ['AX_LOG_LEVEL', 'verbose', 'expected one of fatal, error, warn, info, debug, trace, silent'],
    ['AX_WORKER_ID', 'w/1', 'letters, digits'],
    ['AX_WORKER_TAGS', 'gpu,has space', 'bad item "has space"'],
    ['AX_WORKER_SLOTS', '0', 'expected an integer from 1 to 10000'],
    ['AX_HTTP_EXECUTOR_ALLOW', 'http://x.example/path', 'comma-separated list of hosts'],
    ['AX_DISPATCH_RATE', '-3', 'expected a positive number (per second)'],
    ['AX_RETENTION_DAYS', 'forever', 'expected a positive integer (days)'],
    ['AX_SHUTDOWN_GRACE_S', '0', 'expected a positive number (seconds)'],
  ];

  it.each(bad)('%s=%j gives one line naming it and exit code 2', (variable, value, problem) => {
    const { lines, code } = runOrExit({ [variable]: value });
    expect(code).toBe(2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^ax: ${variable}=`));
    expect(lines[0]).toContain(JSON.stringify(value));
    expect(lines[0]).toContain(' is invalid: ');
    expect(lines[0]).toContain(problem);
  });

  it('prints the exact line of the brief', () => {
    expect(runOrExit({ AX_ACK_TIMEOUT_MS: 'abc' }).lines).toEqual([
      'ax: AX_ACK_TIMEOUT_MS="abc" is invalid: expected a positive integer (milliseconds)',
    ]);
  });

  it('never prints secrets', () => {
    const token = 'short-Secret1';
    for (const variable of ['AX_ADMIN_TOKEN', 'AX_EXECUTOR_SECRET']) {
      const { lines, code } = runOrExit({ [variable]: token });
      expect(code).toBe(2);
      expect(lines).toEqual([`ax: ${variable}=<redacted> is invalid: expected a ${variable === 'AX_ADMIN_TOKEN' ? 'token' : 'key'} of at least 16 characters (13 characters given)`]);
    }
    const hook = runOrExit({ AX_ALERT_WEBHOOK_URL: 'ftp://hooks.example/T0KEN-abc' });
    expect(hook.lines).toHaveLength(1);
    expect(hook.lines[0]).not.toContain('T0KEN');
    const url = runOrExit({ AX_AMQP_URL: 'amqp://user:pa55word@rabbit' });
    expect(url.code).toBeUndefined(); // valid: no database path needed
    const mysql = runOrExit({ AX_MYSQL_URL: 'mysql://user:pa55word@db:3306' });
    expect(mysql.lines).toEqual([
      'ax: AX_MYSQL_URL="mysql://user:***@db:3306" is invalid: expected a mysql:// or mariadb:// URL with a database name',
    ]);
  });

  it('keeps a value with newlines on one line', () => {
    const { lines } = runOrExit({ AX_NAMESPACE: 'a\nb' });
    expect(lines).toEqual(['ax: AX_NAMESPACE="a\\nb" is invalid: expected lower-case letters, digits, "_", "-" or "." (1 to 64 characters)']);
  });

  it('names further wrong variables on the same single line', () => {
    const { lines, code } = runOrExit({ AX_ACK_TIMEOUT_MS: 'x', AX_LOG_LEVEL: 'loud', AX_RETENTION_DAYS: '-1' });
    expect(code).toBe(2);
    expect(lines).toEqual([
      'ax: AX_LOG_LEVEL="loud" is invalid: expected one of fatal, error, warn, info, debug, trace, silent (also wrong: AX_RETENTION_DAYS, AX_ACK_TIMEOUT_MS)',
    ]);
  });

  it('returns the config when everything is valid', () => {
    const { lines, code } = runOrExit({ AX_ACK_TIMEOUT_MS: '100' });
    expect(lines).toEqual([]);
    expect(code).toBeUndefined();
  });

  describe('with the real process.exit and stderr', () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('writes to stderr and calls process.exit(2)', () => {
      const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
      const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
      expect(() => loadConfigOrExit(axServiceFields('worker'), { AX_WORKER_SLOTS: 'lots' })).toThrow(ConfigError);
      expect(exit).toHaveBeenCalledWith(2);
      expect(write.mock.calls).toEqual([
        ['ax: AX_WORKER_SLOTS="lots" is invalid: expected an integer from 1 to 10000\n'],
      ]);
    });
  });
});

describe('NODE_ENV=production refuses placeholder and weak secrets', () => {
  /** A valid production environment of every ax variable (generated-looking secrets). */
  const base = {
    NODE_ENV: 'production',
    AX_HTTP_EXECUTOR_ALLOW: 'orders.internal:8080',
    AX_ADMIN_TOKEN: 'axt_Zq8rM2vK9pL4sT7wX1cB6nH3jF5gD0yA',
    AX_EXECUTOR_SECRET: 'Jt5Rk2Wq9Lm4Xv7Pb1Nc6Hs3Gd8Fy0Za',
    AX_MYSQL_URL: 'mysql://ax:Pw9Tq2Lk7Xv4@mysql-primary.db.svc:3306/ax',
    AX_REDIS_URL: 'redis://:Pw9Tq2Lk7Xv4@redis.db.svc:6379',
    AX_AMQP_URL: 'amqp://ax:Pw9Tq2Lk7Xv4@rabbitmq.mq.svc:5672',
  };

  /** loadConfigOrExit of every ax variable with injected io. */
  function runProduction(overrides: Record<string, string>): { lines: string[]; code: number | undefined } {
    const written: string[] = [];
    let code: number | undefined;
    try {
      loadConfigOrExit(axServiceFields('admin-api'), { ...base, ...overrides }, {
        writeError: (text) => written.push(text),
        exit: (c) => {
          code = c;
        },
      });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
    }
    return { lines: written.join('').split('\n').filter((l) => l !== ''), code };
  }

  it('accepts generated secrets and passwords', () => {
    expect(runProduction({})).toEqual({ lines: [], code: undefined });
  });

  it.each([
    ['AX_ADMIN_TOKEN', 'CHANGE_ME_at_least_16_chars'],
    ['AX_ADMIN_TOKEN', 'change-me-admin-token-0000-0000-0000'],
    ['AX_EXECUTOR_SECRET', 'CHANGE_ME_at_least_16_chars'],
    ['AX_EXECUTOR_SECRET', 'ChangeMe-executor-secret-0000-0000-0000'],
    ['AX_ALERT_WEBHOOK_URL', 'https://hooks.example/services/CHANGE_ME'],
  ])('%s=%j (a placeholder) stops the process: one line naming it, never the value, exit code 2', (variable, value) => {
    const { lines, code } = runProduction({ [variable]: value });
    expect(code).toBe(2);
    expect(lines).toEqual([`ax: ${variable}=<redacted> is invalid: a placeholder (it contains CHANGE_ME), refused with NODE_ENV=production`]);
  });

  it.each([
    ['AX_MYSQL_URL', 'mysql://ax:CHANGE_ME@mysql-primary.db.svc:3306/ax', 'mysql://ax:***@mysql-primary.db.svc:3306/ax'],
    ['AX_REDIS_URL', 'redis://:CHANGE_ME@redis.db.svc:6379', 'redis://:***@redis.db.svc:6379'],
    ['AX_AMQP_URL', 'amqp://ax:change-me-rabbitmq@rabbitmq:5672', 'amqp://ax:***@rabbitmq:5672'],
  ])('%s with a placeholder password stops the process, the password masked', (variable, value, shown) => {
    const { lines, code } = runProduction({ [variable]: value });
    expect(code).toBe(2);
    expect(lines).toEqual([`ax: ${variable}="${shown}" is invalid: its password is a placeholder (it contains CHANGE_ME), refused with NODE_ENV=production`]);
  });

  it.each(['AX_ADMIN_TOKEN', 'AX_EXECUTOR_SECRET'])('%s shorter than 32 characters stops the process (16 are enough outside production)', (variable) => {
    const value = 'Jt5Rk2Wq9Lm4Xv7Pb1Nc';
    const { lines, code } = runProduction({ [variable]: value });
    expect(code).toBe(2);
    expect(lines).toEqual([`ax: ${variable}=<redacted> is invalid: expected at least 32 characters with NODE_ENV=production (20 characters given)`]);
    expect(loadConfig(axServiceFields('admin-api'), { [variable]: value })).toBeDefined();
  });

  it('a short placeholder is reported as a placeholder, not by its length', () => {
    expect(runProduction({ AX_EXECUTOR_SECRET: 'change-me' }).lines).toEqual([
      'ax: AX_EXECUTOR_SECRET=<redacted> is invalid: a placeholder (it contains CHANGE_ME), refused with NODE_ENV=production',
    ]);
  });

  it('AX_EXECUTOR_SECRET of one repeated character stops the process', () => {
    expect(runProduction({ AX_EXECUTOR_SECRET: '0'.repeat(40) }).lines).toEqual([
      'ax: AX_EXECUTOR_SECRET=<redacted> is invalid: expected at least 8 different characters with NODE_ENV=production',
    ]);
  });

  it('names every refused secret on the one line', () => {
    const { lines, code } = runProduction({ AX_ADMIN_TOKEN: 'CHANGE_ME_at_least_16_chars', AX_EXECUTOR_SECRET: 'CHANGE_ME_at_least_16_chars', AX_AMQP_URL: 'amqp://ax:CHANGE_ME@rabbitmq:5672' });
    expect(code).toBe(2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ax: AX_AMQP_URL="amqp:\/\/ax:\*\*\*@rabbitmq:5672" is invalid: .* \(also wrong: AX_ADMIN_TOKEN, AX_EXECUTOR_SECRET\)$/);
    expect(lines[0]).not.toMatch(/CHANGE_ME_at/);
  });

  it('accepts the same placeholders outside production (laptops, tests)', () => {
    const config = loadConfig(axServiceFields('admin-api'), {
      AX_ADMIN_TOKEN: 'CHANGE_ME_at_least_16_chars',
      AX_EXECUTOR_SECRET: 'change-me-executor-secret-0000',
      AX_AMQP_URL: 'amqp://ax:CHANGE_ME@rabbitmq:5672',
    });
    expect(config.executorSecret).toBe('change-me-executor-secret-0000');
  });
});

describe('maskUrlPassword', () => {
  it('masks passwords in URLs, parsable or not', () => {
    expect(maskUrlPassword('amqp://guest:guest@127.0.0.1:5672')).toBe('amqp://guest:***@127.0.0.1:5672');
    expect(maskUrlPassword('redis://:s3cret@h:6379/0')).toBe('redis://:***@h:6379/0');
    expect(maskUrlPassword('connect to mysql://u:p@ss@db failed')).toBe('connect to mysql://u:***@db failed');
    expect(maskUrlPassword('mysql://root@127.0.0.1/ax')).toBe('mysql://root@127.0.0.1/ax');
  });
});

describe('#44 credentials from files (<NAME>_FILE)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-config-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const fields = pickFields(axConfigFields, ['amqpUrl', 'executorSecret', 'workerSlots']);

  it('reads AX_AMQP_URL_FILE and AX_EXECUTOR_SECRET_FILE, one trailing newline removed; the values never need the environment', () => {
    writeFileSync(path.join(dir, 'amqp'), 'amqp://ax:from-a-file@rabbit:5672\n');
    writeFileSync(path.join(dir, 'executor'), 'executor-secret-from-a-file-0123456789\r\n');
    const config = loadConfig(fields, { AX_AMQP_URL_FILE: path.join(dir, 'amqp'), AX_EXECUTOR_SECRET_FILE: path.join(dir, 'executor') });
    expect(config.amqpUrl).toEqual(['amqp://ax:from-a-file@rabbit:5672']);
    expect(config.executorSecret).toBe('executor-secret-from-a-file-0123456789');
  });

  it('both set, or a file that cannot be read, is one line naming <NAME>_FILE and never a value', () => {
    writeFileSync(path.join(dir, 'secret'), 'executor-secret-from-a-file-0123456789\n');
    expect(() => loadConfig(fields, { AX_EXECUTOR_SECRET: 'x'.repeat(40), AX_EXECUTOR_SECRET_FILE: path.join(dir, 'secret') })).toThrow(
      /^ax: AX_EXECUTOR_SECRET_FILE=".*" is invalid: set either AX_EXECUTOR_SECRET or AX_EXECUTOR_SECRET_FILE, not both$/,
    );
    let message = '';
    try {
      loadConfig(fields, { AX_AMQP_URL_FILE: path.join(dir, 'missing') });
    } catch (error) {
      message = (error as ConfigError).message;
    }
    expect(message).toMatch(/^ax: AX_AMQP_URL_FILE=".*missing" is invalid: expected a readable file holding AX_AMQP_URL \(ENOENT\)$/);
  });

  it('a bad value read from a file is reported like the variable itself, its password masked', () => {
    writeFileSync(path.join(dir, 'bad-amqp'), 'http://ax:pw-in-file@rabbit\n');
    expect(() => loadConfig(fields, { AX_AMQP_URL_FILE: path.join(dir, 'bad-amqp') })).toThrow(/AX_AMQP_URL="http:\/\/ax:\*\*\*@rabbit" is invalid/);
  });

  it('a public variable has no _FILE form', () => {
    writeFileSync(path.join(dir, 'slots'), '7\n');
    expect(loadConfig(fields, { AX_WORKER_SLOTS_FILE: path.join(dir, 'slots'), AX_WORKER_SLOTS: '3' }).workerSlots).toBe(3);
  });
});
