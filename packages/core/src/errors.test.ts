import { describe, expect, it } from 'vitest';
import { AxError, capIssues, CycleError, IllegalTransitionError, MAX_REPORTED_ISSUES, TemplateError, ValidationError, toError, type Issue } from './errors.js';

describe('toError', () => {
  it('returns errors as they are', () => {
    const error = new TypeError('x');
    expect(toError(error)).toBe(error);
  });

  it('wraps strings and other values, keeping the value as cause', () => {
    expect(toError('boom').message).toBe('boom');
    const converted = toError({ code: 42 });
    expect(converted.message).toBe('non-error value thrown: {"code":42}');
    expect(converted.cause).toEqual({ code: 42 });
    expect(toError(undefined).message).toBe('non-error value thrown: undefined');
    expect(toError({ message: 'from a plain object' }).message).toBe('non-error value thrown: from a plain object');
  });

  it('survives circular values', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(toError(circular).message).toBe('non-error value thrown: [object Object]');
  });
});

describe('error classes', () => {
  it('carry codes, names and details', () => {
    const validation = new ValidationError(
      [
        { path: 'a', message: 'a: bad' },
        { path: 'b', message: 'b: bad' },
      ],
      'task definition',
    );
    expect(validation).toBeInstanceOf(AxError);
    expect(validation).toMatchObject({ name: 'ValidationError', code: 'VALIDATION_FAILED', message: 'invalid task definition: a: bad; b: bad' });
    expect(validation.issues).toHaveLength(2);

    const many = new ValidationError(Array.from({ length: 7 }, (_, i) => ({ path: `f${i}`, message: `f${i}: bad` })));
    expect(many.message).toBe('invalid input: f0: bad; f1: bad; f2: bad; f3: bad; f4: bad; and 2 more');

    expect(new IllegalTransitionError('SUCCESS', 'RUNNING').message).toBe('illegal instance state transition from SUCCESS to RUNNING');
    expect(new CycleError(['a', 'b', 'a'])).toMatchObject({ code: 'CYCLE', cycle: ['a', 'b', 'a'], message: 'dependency cycle: a → b → a' });
    expect(new TemplateError('{{x}}', 'unknown')).toMatchObject({ code: 'TEMPLATE_FAILED', placeholder: '{{x}}', name: 'TemplateError' });
  });
});

describe('capIssues', () => {
  const issues = (n: number): Issue[] => Array.from({ length: n }, (_, i) => ({ path: `a[${i}]`, message: `a[${i}]: wrong` }));

  it('keeps up to the cap as is', () => {
    expect(capIssues(issues(MAX_REPORTED_ISSUES))).toEqual(issues(MAX_REPORTED_ISSUES));
    expect(capIssues([])).toEqual([]);
  });

  it('past the cap keeps the first ones and says the rest were left out', () => {
    const capped = capIssues(issues(5_000));
    expect(capped).toHaveLength(MAX_REPORTED_ISSUES + 1);
    expect(capped[0]).toEqual({ path: 'a[0]', message: 'a[0]: wrong' });
    expect(capped.at(-1)).toEqual({ path: '', message: `more issues not shown: only the first ${MAX_REPORTED_ISSUES} are reported` });
    expect(capIssues(issues(3), 2)).toHaveLength(3);
  });
});
