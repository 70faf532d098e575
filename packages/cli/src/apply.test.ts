/* eslint-disable @typescript-eslint/no-unsafe-member-access -- API bodies are untyped JSON here */
/**
 * `axctl apply` against the real admin API (in-process, test database) and the built binary:
 * a DAG folder of five job files with dependsOn — dry run, apply, edit + delete with --prune,
 * and a cycle across two files refused with nothing applied.
 */
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@ax/testing';
import { axctl, axctlIn, killLeftovers, startApp, type TestApp } from './axctl.test-helper.js';
import { treeLines } from './commands/dag.js';

let t: TestApp;
let root: string;
let dag: string;

const job = (name: string, deps: string[] = [], extra = ''): string =>
  `name: ${name}\nschedule: {type: none}\nexec: {type: shell, command: [echo, ${name}]}\n${deps.length === 0 ? '' : `dependsOn:\n${deps.map((d) => `  - task: ${d}\n`).join('')}`}${extra}`;
const write = (dir: string, file: string, text: string): void => writeFileSync(path.join(dir, file), text);
const edges = async (): Promise<string[]> => ((await t.call('GET', '/api/v1/dag')).body.edges as Array<{ parent: string; child: string }>).map((e) => `${e.parent}>${e.child}`).sort();
const names = async (): Promise<string[]> => ((await t.call('GET', '/api/v1/tasks')).body.items as Array<{ name: string }>).map((x) => x.name);

beforeAll(async () => {
  t = await startApp();
  root = mkdtempSync(path.join(tmpdir(), 'axctl-apply-'));
  dag = path.join(root, 'dag');
  rmSync(dag, { recursive: true, force: true });
  await import('node:fs').then((fs) => fs.mkdirSync(dag));
  write(dag, '01-extract.yaml', job('extract'));
  write(dag, '02-clean.yaml', job('clean', ['extract']));
  write(dag, '03-enrich.yml', job('enrich', ['extract']));
  write(dag, '04-load.yaml', job('load', ['clean', 'enrich']));
  write(dag, '05-report.yaml', job('report', ['load']));
  write(dag, 'README.md', 'not a job file');
});
afterAll(async () => {
  expect(killLeftovers()).toBe(0);
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  await t?.close();
});

describe('axctl apply -f DIR', () => {
  it('--dry-run prints the diff and changes nothing (exit 3); apply creates the tasks and the DAG (exit 0); again: nothing to do', async () => {
    const dry = await axctl(t, ['apply', '-f', dag, '--dry-run']);
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(3);
    expect(dry.lines[0]).toMatch(/^ACTION\s+TASK\s+TEAM\s+CHANGES$/);
    expect(dry.lines.slice(1, 6).map((l) => l.split(/\s+/).slice(0, 2).join(' '))).toEqual(['create extract', 'create clean', 'create enrich', 'create load', 'create report']);
    expect(dry.lines.slice(-2)).toEqual(['5 to create, 0 to change, 0 to delete, 0 unchanged', 'dry run: the API accepted it; nothing was applied']);
    expect(await names()).toEqual([]);

    const applied = await axctl(t, ['apply', '-f', dag]);
    expect([applied.code, applied.stderr]).toEqual([0, '']);
    expect(applied.lines.at(-1)).toBe('applied: 5 created, 0 changed, 0 deleted, 0 unchanged');
    expect(await edges()).toEqual(['clean>load', 'enrich>load', 'extract>clean', 'extract>enrich', 'load>report']);

    const again = await axctlIn(t, ['apply', '-f', dag, '--dry-run']);
    expect([again.code, again.lines.at(-1)]).toEqual([0, 'nothing to do']);
  });

  it('one file edited and one deleted: apply --prune lists the deletion first, then changes and removes exactly those; a console-made task stays', async () => {
    write(dag, '04-load.yaml', job('load', ['clean'], 'priority: 8\n'));
    unlinkSync(path.join(dag, '05-report.yaml'));
    // #47: a task made in the console (no managed-by marker) is never pruned.
    expect((await t.call('POST', '/api/v1/tasks', { body: { name: 'console_made', schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] } } })).status).toBe(201);
    expect((await t.call('GET', '/api/v1/tasks/extract')).body.managedBy).toBe('axctl');
    // A token of every team prunes only in a team it names, or with --all-teams.
    const everyTeam = await axctlIn(t, ['apply', '-f', dag, '--prune', '--dry-run'], { token: t.tokens.admin });
    expect([everyTeam.code, everyTeam.errLines]).toEqual([2, ['axctl: apply: --prune with a token of every team ("*") needs --team NAME, or --all-teams to prune in every team']]);
    const dry = await axctlIn(t, ['apply', '-f', dag, '--prune', '--dry-run', '--team', 'default'], { token: t.tokens.admin });
    expect(dry.code).toBe(3);
    expect(dry.lines[0]).toBe('--prune: 1 task(s) of team default applied from source axctl named in no file will be deleted: report');
    const rows = dry.lines.slice(2, 7).map((l) => l.split(/\s{2,}/));
    expect(rows).toEqual([
      ['unchanged', 'extract', 'default', '-'],
      ['unchanged', 'clean', 'default', '-'],
      ['unchanged', 'enrich', 'default', '-'],
      ['change', 'load', 'default', 'priority,dependsOn'],
      ['delete', 'report', 'default', '-'],
    ]);
    // #47: then what changes, value by value (old → new).
    expect(dry.lines.slice(7, -2)).toEqual(['  load.priority: 5 → 8', '  load.dependsOn: clean:ALL_SUCCESS,enrich:ALL_SUCCESS → clean:ALL_SUCCESS']);
    // Another source prunes nothing of these.
    const other = await axctlIn(t, ['apply', '-f', dag, '--prune', '--dry-run', '--all-teams', '--source', 'other-repo'], { token: t.tokens.admin });
    expect(other.lines[0]).toBe("--prune: no task of the token's teams applied from source other-repo is left out of the files");
    // Prune deletes tasks: an operator token is refused, nothing applied.
    const operator = await axctlIn(t, ['apply', '-f', dag, '--prune', '--team', 'default']);
    expect(operator.code).toBe(1);
    expect(operator.errLines.join('\n')).toMatch(/403 FORBIDDEN/);
    const applied = await axctlIn(t, ['apply', '-f', dag, '--prune', '--all-teams'], { token: t.tokens.admin });
    expect([applied.code, applied.lines.at(-1)]).toEqual([0, 'applied: 0 created, 1 changed, 1 deleted, 3 unchanged']);
    expect(await names()).toEqual(['clean', 'console_made', 'enrich', 'extract', 'load']);
    expect(await edges()).toEqual(['clean>load', 'extract>clean', 'extract>enrich']);
    expect((await t.call('GET', '/api/v1/tasks/load')).body.priority).toBe(8);
    expect((await t.call('DELETE', '/api/v1/tasks/console_made')).status).toBe(204);
  });

  it('a cycle across two files is refused with the cycle named (exit 1); nothing of the folder is applied', async () => {
    const bad = path.join(root, 'cycle');
    await import('node:fs').then((fs) => fs.mkdirSync(bad));
    write(bad, 'a.yaml', job('cyc_a', ['cyc_b']));
    write(bad, 'b.yaml', job('cyc_b', ['cyc_a']));
    write(bad, 'c.yaml', job('cyc_free'));
    const r = await axctl(t, ['apply', '-f', bad]);
    expect(r.code).toBe(1);
    expect(r.errLines[0]).toBe(`axctl: apply: ${bad}: dependsOn: cycle cyc_b → cyc_a → cyc_b, nothing was applied (409 CYCLE)`);
    expect(r.errLines[1]).toBe(`  the cycle runs through ${path.join(bad, 'b.yaml')}, ${path.join(bad, 'a.yaml')}`);
    expect(await names()).toEqual(['clean', 'enrich', 'extract', 'load']);
  });

  it('a missing parent and an invalid file name their file and document', async () => {
    const dir = path.join(root, 'bad');
    await import('node:fs').then((fs) => fs.mkdirSync(dir));
    write(dir, 'a.yaml', `${job('ok_one')}---\n${job('orphan', ['nowhere'])}`);
    const r = await axctlIn(t, ['apply', '-f', dir]);
    expect(r.code).toBe(1);
    expect(r.errLines[1]).toBe(`  ${path.join(dir, 'a.yaml')} document 2: dependsOn[0].task: no task "nowhere" (task "orphan" depends on it; create it first or in the same import)`);
    write(dir, 'a.yaml', 'name: x\nschedule: {type: none}\n');
    const invalid = await axctlIn(t, ['apply', '-f', dir]);
    expect([invalid.code, invalid.errLines[1]]).toEqual([1, expect.stringMatching(/a\.yaml document 1: exec: /)]);
    expect(await names()).toEqual(['clean', 'enrich', 'extract', 'load']);
  });
});

describe('operator commands', () => {
  it('edges list/add/rm, dag show, tasks get -o yaml, tasks delete, completion', async () => {
    expect((await axctlIn(t, ['edges', 'list', '--task', 'clean'])).lines).toEqual(['PARENT   CHILD  RULE', 'extract  clean  ALL_SUCCESS', 'clean    load   ALL_SUCCESS']);
    expect((await axctlIn(t, ['edges', 'add', 'enrich', 'load', '--rule', 'all_done'])).lines).toEqual(['edge enrich → load added (ALL_DONE)']);
    const cyc = await axctlIn(t, ['edges', 'add', 'load', 'extract']);
    expect([cyc.code, cyc.errLines[0]]).toEqual([1, expect.stringMatching(/cycle.*\(409 CYCLE\)$/)]);
    const trig = await axctlIn(t, ['tasks', 'trigger', 'extract', '--biz-date', '2026-11-30']);
    expect(trig.code).toBe(0);
    const shown = await axctlIn(t, ['dag', 'show', 'extract']);
    expect(shown.lines[0]).toBe('biz date 2026-11-30');
    expect(shown.lines[1]).toMatch(/^extract {2}PENDING {2}#\d+$/);
    expect(shown.lines.slice(2)).toEqual(['├─ clean  (no instance)', '│  └─ load  (no instance)', '└─ enrich  (no instance)', '   └─ load  (no instance) [ALL_DONE] (see above)']);
    const yaml = await axctlIn(t, ['tasks', 'get', 'load', '-o', 'yaml']);
    expect(yaml.stdout).toContain('dependsOn:\n  - task: clean\n    rule: ALL_SUCCESS\n  - task: enrich\n    rule: ALL_DONE\n');
    expect(yaml.stdout).not.toContain('version');
    expect((await axctlIn(t, ['edges', 'rm', 'enrich', 'load'])).lines).toEqual(['edge enrich → load removed']);
    expect((await axctlIn(t, ['tasks', 'delete', 'load'])).code).toBe(1); // operator: 403
    expect((await axctlIn(t, ['tasks', 'delete', 'load'], { token: t.tokens.admin })).lines).toEqual(['task load deleted']);
    expect((await axctlIn(t, ['tasks', 'list', '-o', 'yaml'])).stdout.match(/^name: /gm)).toHaveLength(3);
    expect((await axctlIn(t, ['instances', 'get', '1', '-o', 'yaml'])).code).toBe(2);
    const completion = await axctlIn(null, ['completion', 'bash']);
    expect(completion.stdout).toContain('complete -o filenames -F _axctl axctl');
    expect(completion.stdout).toContain('"apply") opts="--file -f --prune --source --all-teams --dry-run');
  });

  it('instances list -w redraws until Ctrl-C and then exits 0', async () => {
    const controller = new AbortController();
    let draws = 0;
    const done = axctlIn(t, ['instances', 'list', '-w'], { signal: controller.signal, onStdout: (text) => (draws += text.split('\n').filter((l) => l.startsWith('--- ')).length) });
    // Two draws, at once and after 2 s: waited for, not assumed after a fixed 2.5 s.
    await waitFor(() => draws >= 2, { description: 'two draws', timeoutMs: 15_000 });
    controller.abort();
    const r = await done;
    expect(r.code).toBe(0);
    expect(r.lines.filter((l) => l.startsWith('--- ')).length).toBeGreaterThanOrEqual(2);
    expect(r.lines.filter((l) => /^\s*ID\s+TASK/.test(l)).length).toBeGreaterThanOrEqual(2);
  });

  it('treeLines draws a shared child once', () => {
    expect(treeLines('a', [{ parent: 'a', child: 'b', rule: 'ALL_SUCCESS' }, { parent: 'a', child: 'c', rule: 'ALL_SUCCESS' }, { parent: 'b', child: 'c', rule: 'ALL_SUCCESS' }], (x) => x)).toEqual(['a', '├─ b', '│  └─ c', '└─ c (see above)']);
  });
});
