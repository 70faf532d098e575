import { describe, expect, it } from 'vitest';
import { isAttributed, isEnrollmentUser, mayRelayReport } from './attribution.js';

const X = 'enr-xxxxxxxxxxx1';
const Y = 'enr-yyyyyyyyyyy1';

describe('R24 attribution of worker replies', () => {
  it("an enrolled worker's execution is spoken for only by its own enrollment's user", () => {
    expect(isAttributed('ax', `ax.${X}`, `${X}.host-1`)).toBe(true);
    expect(isAttributed('ax', `ax.${Y}`, `${X}.host-1`)).toBe(false);
    expect(isAttributed('ax', undefined, `${X}.host-1`)).toBe(false);
    expect(isAttributed('ax', 'guest', `${X}.host-1`)).toBe(false);
    // the same enrollment in another namespace is another user
    expect(isAttributed('ax', `other.${X}`, `${X}.host-1`)).toBe(false);
  });

  it("an unenrolled worker's execution is spoken for by service logins or no user, never by an enrollment user", () => {
    expect(isAttributed('ax', undefined, 'w-1')).toBe(true);
    expect(isAttributed('ax', 'guest', 'w-1')).toBe(true);
    expect(isAttributed('ax', `ax.${X}`, 'w-1')).toBe(false);
    expect(isAttributed('ax', `other.${X}`, 'w-1')).toBe(false);
    // a worker id that only looks enrolled (wrong length) is unenrolled
    expect(isAttributed('ax', undefined, 'enr-short.host')).toBe(true);
  });

  it('reports are relayed by service logins only', () => {
    expect(mayRelayReport(undefined)).toBe(true);
    expect(mayRelayReport('ax-admin')).toBe(true);
    expect(mayRelayReport(`ax.${X}`)).toBe(false);
    expect(isEnrollmentUser(`ax.${X}`)).toBe(true);
    expect(isEnrollmentUser('ax.enr-UPPERCASEABC')).toBe(false);
  });
});
