import { describe, expect, it } from 'vitest';
import {
  hasPlaceholderMarker,
  PLACEHOLDER_MARKER,
  PRODUCTION_SECRET_MIN_DISTINCT_CHARS,
  PRODUCTION_SECRET_MIN_LENGTH,
  productionSecretProblem,
} from './production-secrets.js';

/** 44 characters of `openssl rand -base64 32`. */
const GENERATED = 'q3V9pX0bF2mN7rT1yW8cL4hJ6kD5sA0eZ9uI3oP2gR4=';

describe('hasPlaceholderMarker', () => {
  it.each([
    PLACEHOLDER_MARKER,
    'CHANGE_ME_at_least_16_chars',
    'change-me-executor-secret-0000',
    'ChangeMe',
    'changeme',
    'x-Change.Me-y',
    'change me',
    'CHANGE%5FME',
  ])('finds the marker in %j, whatever its case and separator', (value) => {
    expect(hasPlaceholderMarker(value)).toBe(true);
  });

  it.each(['', GENERATED, 'change', 'me-change', 'chan-ge-me', '%E0%A4%A'])('finds no marker in %j', (value) => {
    expect(hasPlaceholderMarker(value)).toBe(false);
  });
});

describe('productionSecretProblem', () => {
  it('refuses a secret that carries the placeholder marker', () => {
    expect(productionSecretProblem('CHANGE_ME_at_least_16_chars_and_then_some', { kind: 'secret', minLength: 32 })).toBe(
      'a placeholder (it contains CHANGE_ME), refused with NODE_ENV=production',
    );
  });

  it('refuses a secret shorter than its production minimum, saying how long it is', () => {
    expect(PRODUCTION_SECRET_MIN_LENGTH).toBe(32);
    expect(productionSecretProblem('a1b2c3d4e5f6g7h8i9j0', { kind: 'secret', minLength: 32 })).toBe(
      'expected at least 32 characters with NODE_ENV=production (20 characters given)',
    );
    expect(productionSecretProblem(GENERATED.slice(0, 31), { kind: 'secret', minLength: 32 })).toBeDefined();
    expect(productionSecretProblem(GENERATED.slice(0, 32), { kind: 'secret', minLength: 32 })).toBeUndefined();
  });

  it('refuses a long secret made of a few repeated characters', () => {
    expect(PRODUCTION_SECRET_MIN_DISTINCT_CHARS).toBe(8);
    expect(productionSecretProblem('x'.repeat(64), { kind: 'secret', minLength: 32 })).toBe(
      'expected at least 8 different characters with NODE_ENV=production',
    );
    expect(productionSecretProblem('abcdefg'.repeat(6), { kind: 'secret', minLength: 32 })).toBeDefined();
    expect(productionSecretProblem('abcdefgh'.repeat(5), { kind: 'secret', minLength: 32 })).toBeUndefined();
  });

  it('accepts a generated secret, and has no length rule for a secret without a minimum', () => {
    expect(productionSecretProblem(GENERATED, { kind: 'secret', minLength: 32 })).toBeUndefined();
    expect(productionSecretProblem('https://hooks.example/T0KEN', { kind: 'secret' })).toBeUndefined();
    expect(productionSecretProblem('https://hooks.example/CHANGE_ME', { kind: 'secret' })).toBeDefined();
  });

  it.each([
    'mysql://ax:CHANGE_ME@mysql-primary.db.svc:3306/ax',
    'redis://:CHANGE_ME@redis.db.svc:6379',
    'amqp://ax:change-me-rabbitmq@rabbitmq:5672',
    'mysql://ax:Change%2DMe@db/ax',
  ])('refuses the URL %j: its password is a placeholder', (url) => {
    expect(productionSecretProblem(url, { kind: 'url' })).toBe('its password is a placeholder (it contains CHANGE_ME), refused with NODE_ENV=production');
  });

  it('refuses a URL whose user name is a placeholder', () => {
    expect(productionSecretProblem('amqp://CHANGE_ME:s3cret-Pw@rabbit', { kind: 'url' })).toBe(
      'its user name is a placeholder (it contains CHANGE_ME), refused with NODE_ENV=production',
    );
  });

  it('accepts URLs with real passwords, without one, and with the marker-like text outside the credentials', () => {
    expect(productionSecretProblem(`mysql://ax:${encodeURIComponent(GENERATED)}@db:3306/ax`, { kind: 'url' })).toBeUndefined();
    expect(productionSecretProblem('redis://127.0.0.1:6379', { kind: 'url' })).toBeUndefined();
    // "exchange-metrics" contains "change-me": only the credentials of a URL are checked.
    expect(productionSecretProblem('amqp://ax:s3cret-Pw@exchange-metrics.mq.svc:5672', { kind: 'url' })).toBeUndefined();
  });
});
