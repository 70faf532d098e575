import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@ax/kit';
import { workerEnvFields } from '../env.js';
import { allowEntryProblem, hostAllowList } from './host-allow.js';

describe('AX_HTTP_EXECUTOR_ALLOW: which hosts', () => {
  it('exact host, *.domain, host:port and *', () => {
    const allow = hostAllowList(['orders.internal', '*.corp.example', 'api.x:8443']);
    expect(allow.allowsHost(new URL('http://orders.internal:8080/a'))).toBe(true);
    expect(allow.allowsHost(new URL('http://a.corp.example/'))).toBe(true);
    expect(allow.allowsHost(new URL('http://corp.example/'))).toBe(false);
    expect(allow.allowsHost(new URL('https://api.x:8443/'))).toBe(true);
    expect(allow.allowsHost(new URL('https://api.x/'))).toBe(false);
    expect(allow.allowsHost(new URL('http://evil.internal/'))).toBe(false);
    expect(hostAllowList(['*']).allowsHost(new URL('http://anything/'))).toBe(true);
  });

  it('an address or CIDR entry admits URLs whose host is such an address (IPv4, [IPv6], mapped forms), port-scoped when it says so', () => {
    const allow = hostAllowList(['127.0.0.1', '10.1.2.0/24:8443', '[::1]', '[fd00::/8]:9000']);
    expect(allow.allowsHost(new URL('http://127.0.0.1:5000/'))).toBe(true);
    expect(allow.allowsHost(new URL('http://[::ffff:127.0.0.1]:5000/'))).toBe(true);
    expect(allow.allowsHost(new URL('http://127.0.0.2/'))).toBe(false);
    expect(allow.allowsHost(new URL('https://10.1.2.9:8443/'))).toBe(true);
    expect(allow.allowsHost(new URL('https://10.1.2.9/'))).toBe(false);
    expect(allow.allowsHost(new URL('http://[::1]:1234/'))).toBe(true);
    expect(allow.allowsHost(new URL('http://[fd00::5]:9000/'))).toBe(true);
    expect(allow.allowsHost(new URL('http://[fd00::5]:9001/'))).toBe(false);
    // An address entry is not a name: it does not admit names that merely resolve into it.
    expect(allow.allowsHost(new URL('http://localhost:5000/'))).toBe(false);
  });

  it('internal:name admits that exact name (the mark adds no other host)', () => {
    const allow = hostAllowList(['internal:payments.internal:8080']);
    expect(allow.allowsHost(new URL('http://payments.internal:8080/'))).toBe(true);
    expect(allow.allowsHost(new URL('http://payments.internal:8081/'))).toBe(false);
    expect(allow.allowsHost(new URL('http://internal/'))).toBe(false);
    expect(allow.allowsHost(new URL('http://a.payments.internal:8080/'))).toBe(false);
  });
});

describe('AX_HTTP_EXECUTOR_ALLOW: which addresses', () => {
  it('a listed name may resolve to public addresses only: loopback, private, link-local, unspecified and metadata are refused with their class', () => {
    const allow = hostAllowList(['api.example.com', '*.corp.example']);
    expect(allow.refusal('api.example.com', '443', '93.184.216.34')).toBeUndefined();
    expect(allow.refusal('api.example.com', '443', '2606:4700:4700::1111')).toBeUndefined();
    expect(allow.refusal('api.example.com', '443', '127.0.0.1')).toBe('loopback');
    expect(allow.refusal('api.example.com', '443', '::1')).toBe('loopback');
    expect(allow.refusal('api.example.com', '443', '::ffff:127.0.0.1')).toBe('loopback');
    expect(allow.refusal('x.corp.example', '80', '10.0.0.8')).toBe('private');
    expect(allow.refusal('x.corp.example', '80', '172.20.1.1')).toBe('private');
    expect(allow.refusal('x.corp.example', '80', '192.168.0.2')).toBe('private');
    expect(allow.refusal('x.corp.example', '80', 'fd12::1')).toBe('private');
    expect(allow.refusal('x.corp.example', '80', '169.254.169.254')).toBe('link-local, cloud metadata');
    expect(allow.refusal('x.corp.example', '80', 'fe80::1')).toBe('link-local');
    expect(allow.refusal('x.corp.example', '80', '0.0.0.0')).toBe('unspecified');
    expect(allow.refusal('x.corp.example', '80', '::')).toBe('unspecified');
    expect(allow.refusal('x.corp.example', '80', 'fd00:ec2::254')).toBe('private, cloud metadata');
    expect(allow.refusal('x.corp.example', '80', '100.100.100.200')).toBe('shared, cloud metadata');
    expect(allow.refusal('x.corp.example', '80', '::ffff:169.254.169.254')).toBe('link-local, cloud metadata');
  });

  it('an address or CIDR entry admits those addresses for every listed name (any class, metadata too), on its port only when it names one', () => {
    const allow = hostAllowList(['svc.test', '127.0.0.1', '10.1.2.0/24:8443', '[fd00::/8]', '169.254.169.254']);
    expect(allow.refusal('svc.test', '80', '127.0.0.1')).toBeUndefined();
    expect(allow.refusal('svc.test', '80', '::ffff:127.0.0.1')).toBeUndefined();
    expect(allow.refusal('svc.test', '80', '127.0.0.2')).toBe('loopback');
    expect(allow.refusal('svc.test', '8443', '10.1.2.77')).toBeUndefined();
    expect(allow.refusal('svc.test', '80', '10.1.2.77')).toBe('private');
    expect(allow.refusal('svc.test', '80', 'fd00:ec2::254')).toBeUndefined();
    expect(allow.refusal('svc.test', '80', '169.254.169.254')).toBeUndefined();
  });

  it('internal:name lets that name (on that port) resolve to internal addresses, except cloud metadata ones', () => {
    const allow = hostAllowList(['internal:payments.internal:8080', 'payments.internal', 'other.internal']);
    expect(allow.refusal('payments.internal', '8080', '10.9.8.7')).toBeUndefined();
    expect(allow.refusal('payments.internal', '8080', '127.0.0.1')).toBeUndefined();
    expect(allow.refusal('payments.internal', '8080', 'fd00::7')).toBeUndefined();
    expect(allow.refusal('payments.internal', '8080', '169.254.169.254')).toBe('link-local, cloud metadata');
    expect(allow.refusal('payments.internal', '9090', '10.9.8.7')).toBe('private');
    expect(allow.refusal('other.internal', '8080', '10.9.8.7')).toBe('private');
  });

  it('* checks nothing: every host, every address (the development default)', () => {
    const allow = hostAllowList(['*']);
    expect(allow.any).toBe(true);
    expect(allow.refusal('localhost', '80', '127.0.0.1')).toBeUndefined();
    expect(allow.refusal('metadata.example', '80', '169.254.169.254')).toBeUndefined();
    expect(hostAllowList(['a.example']).any).toBe(false);
  });
});

describe('AX_HTTP_EXECUTOR_ALLOW: entries', () => {
  it('accepts every documented form', () => {
    for (const entry of ['*', 'orders.internal', 'orders.internal:8080', '*.corp.example', '*.corp.example:443', '127.0.0.1', '127.0.0.1:9', '10.1.2.0/24', '10.1.2.0/24:8443', '[::1]', '[::1]:8080', '[fd00::/8]', '[fd00::/8]:9000', 'internal:payments.internal', 'internal:payments.internal:8080', 'internal:localhost']) {
      expect(allowEntryProblem(entry), entry).toBeUndefined();
    }
  });

  it('refuses malformed entries with a reason (bad CIDR, wildcard or address marked internal, bad port)', () => {
    expect(allowEntryProblem('10.1.2.3/24')).toMatch(/host bits/);
    expect(allowEntryProblem('10.1.2.0/33')).toMatch(/CIDR/);
    expect(allowEntryProblem('300.1.2.3')).toMatch(/address/);
    expect(allowEntryProblem('[fd00::1/8]')).toMatch(/host bits/);
    expect(allowEntryProblem('[nope]')).toMatch(/address/);
    expect(allowEntryProblem('internal:*.corp.example')).toMatch(/exact host name/);
    expect(allowEntryProblem('internal:10.0.0.1')).toMatch(/exact host name/);
    expect(allowEntryProblem('orders.internal:0')).toMatch(/port/);
    expect(allowEntryProblem('orders.internal:70000')).toMatch(/port/);
    expect(allowEntryProblem('http://orders.internal')).toBeDefined();
    expect(() => hostAllowList(['10.1.2.3/24'])).toThrow(/10\.1\.2\.3\/24/);
  });

  it('the worker config takes the same syntax, and a bad entry is one line naming it (exit code 2), not a failure at the first job', () => {
    // R25 requires a job identity; this test is about the allowlist alone.
    const jobs = { AX_JOB_ISOLATION: 'off' };
    const allow = (value: string) => loadConfig(workerEnvFields, { ...jobs, AX_HTTP_EXECUTOR_ALLOW: value }).httpExecutorAllow;
    expect(allow('API.example.com, 10.1.2.0/24:8443,[::1],internal:payments.internal:8080,127.0.0.1')).toEqual([
      'api.example.com',
      '10.1.2.0/24:8443',
      '[::1]',
      'internal:payments.internal:8080',
      '127.0.0.1',
    ]);
    expect(loadConfig(workerEnvFields, jobs).httpExecutorAllow).toEqual(['*']);
    expect(() => allow('a.example,10.1.2.3/24')).toThrow(ConfigError);
    expect(() => allow('a.example,10.1.2.3/24')).toThrow(/AX_HTTP_EXECUTOR_ALLOW=.*bad item "10\.1\.2\.3\/24": host bits are set/);
    // (a production worker without AX_WORKER_CREDENTIAL_FILE is refused too, #44: only this issue matters here)
    const production = ((): unknown => {
      try {
        return loadConfig(workerEnvFields, { NODE_ENV: 'production', AX_JOB_UIDS: 'default=20001' });
      } catch (error) {
        return error;
      }
    })();
    expect(production).toBeInstanceOf(ConfigError);
    const issue = (production as ConfigError).issues.find((i) => i.variable === 'AX_HTTP_EXECUTOR_ALLOW');
    expect(issue?.unset).toBe(true);
    expect(issue?.problem).toMatch(/^required when NODE_ENV=production/);
  });
});
