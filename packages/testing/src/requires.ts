/**
 * Tests that need a program this repository does not install (faketime, rabbitmq-server,
 * redis-server, chromium, docker-compose…) or an optional package. On a workstation a missing
 * one skips those tests and says so once; under `CI=true` it FAILS: a skip in CI is a green
 * that proves nothing (CONVENTIONS.md "Tests"), so one failing test is registered in its place,
 * whose error names the program and how CI installs it.
 *
 * ```ts
 * describe.skipIf(missingRequirement(it, { name: 'faketime', present: hasFaketime(), install: 'apt-get install faketime' }))(…)
 * ```
 *
 * Call it while the file is collected (top level, or inside a `describe` callback), never
 * inside a test or hook: under CI it registers a test with the `it` it is given. `vitest` is
 * passed in, not imported, so `@ax/testing`'s `dist/` stays loadable outside vitest (bench/).
 */

/** Something a test needs from the machine. */
export interface Requirement {
  /** What is needed, as messages name it: `faketime`, `/usr/bin/chromium`, `dockerfile-utils`. */
  readonly name: string;
  /** Whether it is there on this machine (checked by the caller). */
  readonly present: boolean;
  /** How to get it, as CI does: `apt-get install faketime` (.ci/run installs it that way). */
  readonly install: string;
}

/** Registers a test: vitest's `it` (or `test`). */
export type RegisterTest = (name: string, fn: () => void) => void;

/** Options of {@link missingRequirement}, for its own tests. */
export interface MissingRequirementOptions {
  /** Where `CI` is read; CI mode is exactly `CI=true`. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where the workstation's skip notice goes. Default: a line on stderr. */
  readonly warn?: (line: string) => void;
}

/** Thrown by the test registered under `CI=true` for a missing requirement. */
export class MissingRequirementError extends Error {
  override readonly name = 'MissingRequirementError';
  constructor(readonly requirement: Requirement) {
    super(`${requirement.name} is missing, and under CI=true a missing program fails instead of skipping: CI installs it with \`${requirement.install}\``);
  }
}

/** Names already reported missing (once per test file: vitest loads this module per file). */
const announced = new Set<string>();

/**
 * True when `requirement` is missing, so the caller skips what needs it (`describe.skipIf(…)`,
 * `it.skipIf(…)`); false when it is present. The first time a name is missing in a test file,
 * outside CI this prints one line on stderr; under `CI=true` it registers, with `test`, one
 * failing test named `requires <name>` (where the call is: top level or in the current
 * `describe`) whose error says how CI installs it, so the run exits non-zero and the JSON
 * report counts one failed test.
 */
export function missingRequirement(test: RegisterTest, requirement: Requirement, options: MissingRequirementOptions = {}): boolean {
  if (requirement.present) return false;
  if (announced.has(requirement.name)) return true;
  announced.add(requirement.name);
  const env = options.env ?? process.env;
  if (env['CI'] === 'true') {
    test(`requires ${requirement.name}`, () => {
      throw new MissingRequirementError(requirement);
    });
  } else {
    const warn = options.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
    warn(`${requirement.name} is missing: the tests that need it are skipped (${requirement.install}; under CI=true they fail)`);
  }
  return true;
}
