// docs/design-rules.md is the index of the protocol rules that code, tests and docs cite as
// `R<n>` (#46): the rules' source document is not in the repository, so a citation the page
// does not define, or a test it lists that is gone or no longer names its rule, leaves a reader
// with nothing to look up.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const RULES_PAGE = 'docs/design-rules.md';
const THIS_FILE = relative(root, fileURLToPath(import.meta.url));

/** Where rules are cited, and which files there are text worth reading. */
const CITING_ROOTS = ['packages', 'services', 'test', 'bench', 'scripts', 'deploy', 'examples', 'docs', 'README.md', 'CONTRIBUTING.md'];
const TEXT_EXTENSIONS = new Set(['.ts', '.tsx', '.mts', '.js', '.mjs', '.cjs', '.sql', '.md', '.py', '.yaml', '.yml', '.sh']);
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'build', 'coverage', '__pycache__']);

/** A rule id as code cites it: `R14`, also inside `R15–R17` or `R6/R7`. */
const CITATION = /\bR(\d{1,3})\b/g;

/** One rule of the page: its id, and the tests it lists as `` - `path` — "title" ``. */
interface RuleSection {
  readonly id: number;
  readonly tests: readonly { readonly path: string; readonly title: string }[];
}

/** The `### R<n> — …` sections of the page, each up to the next heading. */
function parseRulesPage(page: string): RuleSection[] {
  const sections: RuleSection[] = [];
  const parts = page.split(/^(?=#{2,3} )/m);
  for (const part of parts) {
    const heading = /^### R(\d+)\b/.exec(part);
    if (heading === null) continue;
    const tests = [...part.matchAll(/^\s*- `([^`]+\.test\.tsx?)` — "([^"]+)"/gm)].map((m) => ({ path: m[1]!, title: m[2]! }));
    sections.push({ id: Number(heading[1]), tests });
  }
  return sections;
}

/** Rule ids cited in `text`. */
function citedIds(text: string): number[] {
  return [...text.matchAll(CITATION)].map((m) => Number(m[1]));
}

/**
 * What is wrong between the page and the repository: ids cited (file → text) that the page does
 * not define, rules defined twice or without a test, and listed tests that are missing, do not
 * hold the quoted title, or whose title does not name the rule. `readFile` returns null for a
 * file that does not exist.
 */
function rulesPageProblems(page: string, citing: ReadonlyMap<string, string>, readFile: (path: string) => string | null): string[] {
  const problems: string[] = [];
  const sections = parseRulesPage(page);
  const defined = new Set<number>();
  for (const s of sections) {
    if (defined.has(s.id)) problems.push(`R${s.id} is defined twice`);
    defined.add(s.id);
    if (!s.tests.some((t) => new RegExp(`\\bR${s.id}\\b`).test(t.title))) problems.push(`R${s.id} lists no test that names it`);
    for (const t of s.tests) {
      const source = readFile(t.path);
      if (source === null) problems.push(`R${s.id}: ${t.path} does not exist`);
      else if (!source.includes(t.title)) problems.push(`R${s.id}: ${t.path} has no test titled "${t.title}"`);
      if (!new RegExp(`\\bR${s.id}\\b`).test(t.title)) problems.push(`R${s.id}: the title "${t.title}" does not name R${s.id}`);
    }
  }
  for (const m of page.matchAll(/`([^`\s]+\.test\.tsx?)`/g)) {
    if (readFile(m[1]!) === null) problems.push(`${m[1]} is named on the page but does not exist`);
  }
  for (const [file, text] of citing) {
    for (const id of new Set(citedIds(text))) {
      if (!defined.has(id)) problems.push(`${file} cites R${id}, which ${RULES_PAGE} does not define`);
    }
  }
  return problems;
}

function listTextFiles(path: string, out: string[]): void {
  const full = join(root, path);
  if (!existsSync(full)) return;
  if (statSync(full).isFile()) {
    if (TEXT_EXTENSIONS.has(extname(path))) out.push(path);
    return;
  }
  for (const entry of readdirSync(full, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || SKIPPED_DIRS.has(entry.name)) continue;
    const child = relative(root, join(full, entry.name));
    if (entry.isDirectory()) listTextFiles(child, out);
    else if (entry.isFile() && TEXT_EXTENSIONS.has(extname(entry.name))) out.push(child);
  }
}

function readRepoFile(path: string): string | null {
  const full = join(root, path);
  return existsSync(full) ? readFileSync(full, 'utf8') : null;
}

describe(`${RULES_PAGE}, the index of the protocol rules (#46)`, () => {
  const page = readFileSync(join(root, RULES_PAGE), 'utf8');

  it('defines every rule the code, tests and docs cite, and every test it lists exists and names its rule', () => {
    const files: string[] = [];
    for (const path of CITING_ROOTS) listTextFiles(path, files);
    // This file is left out: its checks of the check cite rules that do not exist on purpose.
    const citing = new Map(files.filter((f) => f !== THIS_FILE).map((f) => [f, readFileSync(join(root, f), 'utf8')] as const));
    expect(citing.size).toBeGreaterThan(100);
    // The walk really reaches the citations (a wrong root would find none and pass).
    expect(citing.get('services/broker/src/timers.ts')).toMatch(/\bR14\b/);
    expect(rulesPageProblems(page, citing, readRepoFile)).toEqual([]);
  });

  it('defines R1 to R25, each once', () => {
    expect(parseRulesPage(page).map((s) => s.id).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
  });

  it('is linked from the README and docs/architecture.md', () => {
    expect(readRepoFile('README.md')).toContain('(docs/design-rules.md)');
    expect(readRepoFile('docs/architecture.md')).toContain('(design-rules.md)');
  });

  describe('the check itself', () => {
    const files = new Map([['a.test.ts', "it('R1 slots are deterministic', () => {})"]]);
    const read = (p: string): string | null => files.get(p) ?? null;
    const good = '### R1 — slots\n\n- Tests:\n  - `a.test.ts` — "R1 slots are deterministic"\n';

    it('passes a page that defines what is cited and lists a test that names it', () => {
      expect(rulesPageProblems(good, new Map([['x.ts', '// R1: why']]), read)).toEqual([]);
    });

    it('reports a rule the code cites that the page does not define, even inside a range', () => {
      expect(rulesPageProblems(good, new Map([['x.ts', '// R1–R26 hold']]), read)).toEqual([`x.ts cites R26, which ${RULES_PAGE} does not define`]);
    });

    it('reports a listed test file that is gone, and a title the file does not hold', () => {
      const page = `${good}  - \`gone.test.ts\` — "R1 gone"\n  - \`a.test.ts\` — "R1 renamed"\n`;
      expect(rulesPageProblems(page, new Map(), read)).toEqual([
        'R1: gone.test.ts does not exist',
        'R1: a.test.ts has no test titled "R1 renamed"',
        'gone.test.ts is named on the page but does not exist',
      ]);
    });

    it('reports a rule whose listed tests do not name it', () => {
      const page = '### R2 — lock\n\n  - `a.test.ts` — "R1 slots are deterministic"\n';
      expect(rulesPageProblems(page, new Map(), read)).toEqual([
        'R2 lists no test that names it',
        'R2: the title "R1 slots are deterministic" does not name R2',
      ]);
    });
  });
});
