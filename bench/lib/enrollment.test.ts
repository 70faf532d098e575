import { describe, expect, it } from 'vitest';
import { enrolledWorkerEnv, enrolledWorkerId, workerLoginOf } from './enrollment.mjs';

describe("the bench's worker logins (#44)", () => {
  it('enrolls the current code\'s workers and logs a baseline\'s in as before, unless AX_BENCH_WORKER_LOGIN says', () => {
    expect(workerLoginOf({}, false)).toBe('enrollment');
    expect(workerLoginOf({}, true)).toBe('service');
    expect(workerLoginOf({ AX_BENCH_WORKER_LOGIN: 'service' }, false)).toBe('service');
    expect(workerLoginOf({ AX_BENCH_WORKER_LOGIN: 'enrollment' }, true)).toBe('enrollment');
  });

  it('gives an enrolled worker its credential file and admin-api, and removes the secret and the service logins', () => {
    const enrollment = { id: 'enr-abc', file: '/tmp/x/bench-workers.credential', adminUrl: 'http://127.0.0.1:1234' };
    const round = { AX_NAMESPACE: 'ns', AX_EXECUTOR_SECRET: 's', AX_MYSQL_URL: 'm', AX_REDIS_URL: 'r', AX_AMQP_URL: 'a' };
    const env = { ...round, ...enrolledWorkerEnv(enrollment) };
    // undefined: startProcess removes the variable, also one the bench itself was started with
    const removed = Object.keys(env).filter((k) => env[k as keyof typeof env] === undefined);
    expect(removed.sort()).toEqual(['AX_AMQP_URL', 'AX_EXECUTOR_SECRET', 'AX_MYSQL_URL', 'AX_REDIS_URL']);
    expect(env).toMatchObject({ AX_NAMESPACE: 'ns', AX_WORKER_CREDENTIAL_FILE: enrollment.file, AX_ADMIN_URL: enrollment.adminUrl });
    expect(enrolledWorkerId(enrollment, 'bench-w1')).toBe('enr-abc.bench-w1');
    expect(enrolledWorkerId(undefined, 'bench-w1')).toBe('bench-w1');
  });
});
