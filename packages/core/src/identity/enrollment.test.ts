import { describe, expect, it } from 'vitest';
import {
  busUserOf,
  credentialHash,
  enrolledWorkerId,
  enrollmentBusPermissions,
  enrollmentLoginPassword,
  enrollmentOfCredential,
  enrollmentOfWorkerId,
  newEnrollmentId,
  newWorkerCredential,
  ENROLLMENT_ID_PATTERN,
} from './enrollment.js';

describe('worker enrollment identities (R24)', () => {
  it('makes ids and credentials that name each other', () => {
    const id = newEnrollmentId();
    expect(id).toMatch(ENROLLMENT_ID_PATTERN);
    const credential = newWorkerCredential(id);
    expect(enrollmentOfCredential(credential)).toBe(id);
    expect(enrollmentOfCredential(`${credential}\n`)).toBe(id);
    expect(enrollmentOfCredential('axw_enr-abc_x')).toBeNull();
    expect(credentialHash(credential)).toMatch(/^[0-9a-f]{64}$/);
    expect(credentialHash(credential)).toBe(credentialHash(`${credential}\n`));
    expect(newWorkerCredential(id)).not.toBe(credential);
  });

  it('reads the enrollment back from a worker id, and none from an unenrolled one', () => {
    const workerId = enrolledWorkerId('enr-abcdef123456', 'host-1.a');
    expect(workerId).toBe('enr-abcdef123456.host-1.a');
    expect(enrollmentOfWorkerId(workerId)).toBe('enr-abcdef123456');
    expect(enrollmentOfWorkerId('worker-1')).toBeNull();
    expect(enrollmentOfWorkerId('enr-abcdef123456')).toBeNull();
    expect(enrollmentOfWorkerId('enr-abcdef123456.')).toBeNull();
    expect(enrollmentOfWorkerId('enr-ABCDEF123456.x')).toBeNull();
    expect(() => enrolledWorkerId('alpha', 'x')).toThrow(/invalid enrollment id/);
  });

  it('derives a different password per kind, namespace, enrollment and secret', () => {
    const a = enrollmentLoginPassword('s', 'amqp', 'ax', 'enr-abcdef123456');
    expect(a).toBe(enrollmentLoginPassword('s', 'amqp', 'ax', 'enr-abcdef123456'));
    expect(new Set([
      a,
      enrollmentLoginPassword('s', 'redis', 'ax', 'enr-abcdef123456'),
      enrollmentLoginPassword('s', 'amqp', 'ax2', 'enr-abcdef123456'),
      enrollmentLoginPassword('s', 'amqp', 'ax', 'enr-abcdef123457'),
      enrollmentLoginPassword('t', 'amqp', 'ax', 'enr-abcdef123456'),
    ]).size).toBe(5);
    expect(busUserOf('ax', 'enr-abcdef123456')).toBe('ax.enr-abcdef123456');
  });

  it('lets an enrollment touch only its own queues and write only events, logs and dead letters', () => {
    const p = enrollmentBusPermissions('ax.t1', 'enr-abcdef123456');
    const re = (s: string) => new RegExp(s);
    expect(re(p.read).test('ax.t1.worker.enr-abcdef123456.h1')).toBe(true);
    expect(re(p.read).test('ax.t1.worker.enr-abcdef123456.h1.control')).toBe(true);
    expect(re(p.read).test('ax.t1.worker.enr-abcdef999999.h1')).toBe(false);
    expect(re(p.read).test('ax.t1.dispatch')).toBe(false);
    expect(re(p.read).test('ax.t1.events')).toBe(false);
    expect(re(p.read).test('axxt1.worker.enr-abcdef123456.h1')).toBe(false);
    expect(re(p.write).test('ax.t1.events')).toBe(true);
    expect(re(p.write).test('ax.t1.logs')).toBe(true);
    expect(re(p.write).test('ax.t1.dispatch')).toBe(false);
    expect(re(p.write).test('amq.default')).toBe(false);
    expect(re(p.write).test('ax.t1.events.quorum')).toBe(false);
    expect(re(p.configure).test('ax.t1.worker.enr-abcdef999999.h1')).toBe(false);
  });
});
