/**
 * Shared helpers of the deploy checks: paths, a small Dockerfile parser, YAML parsing and the
 * configuration variables the code really reads.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const repo = fileURLToPath(new URL('../../', import.meta.url));
/** `deploy/` of the repository. */
export const deployDir = path.join(repo, 'deploy');

/** The four services: Dockerfile target, workspace package, default AX_HTTP_PORT. */
export const SERVICES = [
  { name: 'scheduler', pkg: '@ax/scheduler', port: 9101 },
  { name: 'broker', pkg: '@ax/broker', port: 9102 },
  { name: 'worker', pkg: '@ax/worker', port: 9103 },
  { name: 'admin-api', pkg: '@ax/admin-api', port: 8080 },
] as const;

/** Every image the Dockerfile builds (its targets). */
export const IMAGE_TARGETS = ['scheduler', 'broker', 'worker', 'admin-api', 'migrate', 'example-business-service'] as const;

export function readRepoFile(relative: string): string {
  return readFileSync(path.join(repo, relative), 'utf8');
}

/** True when `command` is on the PATH. */
export function hasCommand(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch (_notFound) {
    return false;
  }
}

// ---- YAML -------------------------------------------------------------------------------------

interface YamlDocument {
  readonly errors: readonly { readonly message: string }[];
  toJS(): unknown;
}
interface YamlModule {
  parseAllDocuments(source: string, options?: { uniqueKeys?: boolean }): YamlDocument[] | { errors: unknown[] };
}

/**
 * The `yaml` package, loaded from @ax/core's dependencies: it is not a root dependency, so
 * neither `import 'yaml'` from test/ nor its types resolve here.
 */
const yaml = createRequire(path.join(repo, 'packages', 'core', 'package.json'))('yaml') as YamlModule;

/** Every document of a YAML text as plain data; throws naming the file on a parse error. */
export function parseYamlDocuments(source: string, label: string): unknown[] {
  const docs = yaml.parseAllDocuments(source, { uniqueKeys: true });
  if (!Array.isArray(docs)) throw new Error(`${label}: not YAML documents`);
  const out: unknown[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${label}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value = doc.toJS();
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

/** A plain object (or an error naming what was expected). */
export function obj(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${what}: expected a mapping, got ${JSON.stringify(value)}`);
  return value as Record<string, unknown>;
}

/** An array (or an error naming what was expected). */
export function arr(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${what}: expected a list, got ${JSON.stringify(value)}`);
  return value;
}

// ---- Dockerfile -------------------------------------------------------------------------------

/** One instruction: keyword upper-cased, arguments as written (continuations joined). */
export interface Instruction {
  readonly keyword: string;
  readonly args: string;
  readonly line: number;
}

/** One build stage: `FROM <base> AS <name>` and its instructions. */
export interface Stage {
  readonly name: string | undefined;
  readonly base: string;
  readonly instructions: Instruction[];
}

export interface ParsedDockerfile {
  /** Instructions before the first FROM (ARG only, by the Dockerfile rules). */
  readonly preamble: Instruction[];
  readonly stages: Stage[];
}

/**
 * Parses a Dockerfile the way the builder does for what these checks need: comments and blank
 * lines dropped (also inside continued instructions), `\` continuations joined, `FROM … AS name`
 * starting a stage. Parser directives (`# syntax=`) are comments here.
 */
export function parseDockerfile(text: string): ParsedDockerfile {
  const preamble: Instruction[] = [];
  const stages: Stage[] = [];
  const lines = text.split('\n');
  let i = 0;
  while (i < lines.length) {
    const start = i;
    let current = (lines[i] ?? '').trim();
    i += 1;
    if (current === '' || current.startsWith('#')) continue;
    while (current.endsWith('\\')) {
      current = current.slice(0, -1).trimEnd();
      // A comment or blank line inside a continuation is skipped, not the end of it.
      while (i < lines.length && /^\s*(#.*)?$/.test(lines[i] ?? '')) i += 1;
      if (i >= lines.length) break;
      current = `${current} ${(lines[i] ?? '').trim()}`;
      i += 1;
    }
    const match = /^([A-Za-z]+)\s*(.*)$/.exec(current);
    if (!match) throw new Error(`Dockerfile line ${start + 1}: cannot parse ${JSON.stringify(current)}`);
    const instruction: Instruction = { keyword: (match[1] ?? '').toUpperCase(), args: match[2] ?? '', line: start + 1 };
    if (instruction.keyword === 'FROM') {
      const from = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args);
      if (!from) throw new Error(`Dockerfile line ${start + 1}: bad FROM ${instruction.args}`);
      stages.push({ base: from[1] ?? '', name: from[2]?.toLowerCase(), instructions: [] });
    } else if (stages.length === 0) {
      preamble.push(instruction);
    } else {
      stages[stages.length - 1]?.instructions.push(instruction);
    }
  }
  return { preamble, stages };
}

/** A stage and the stages it is built FROM, nearest first (ending at an image). */
export function stageChain(file: ParsedDockerfile, name: string): Stage[] {
  const chain: Stage[] = [];
  let stage = file.stages.find((s) => s.name === name);
  while (stage !== undefined) {
    if (chain.includes(stage)) throw new Error(`Dockerfile: stage ${name} inherits from itself`);
    chain.push(stage);
    const base = stage.base.toLowerCase();
    stage = file.stages.find((s) => s.name === base);
  }
  return chain;
}

/** The last instruction of `keyword` in effect for a stage (its own, else inherited). */
export function effective(file: ParsedDockerfile, name: string, keyword: string): Instruction | undefined {
  for (const stage of stageChain(file, name)) {
    const own = stage.instructions.filter((ins) => ins.keyword === keyword);
    if (own.length > 0) return own[own.length - 1];
  }
  return undefined;
}

/** `ENV` values in effect for a stage (`ENV A=1 B=2` form, inherited ones overridden). */
export function effectiveEnv(file: ParsedDockerfile, name: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const stage of stageChain(file, name).reverse()) {
    for (const ins of stage.instructions) {
      if (ins.keyword !== 'ENV') continue;
      for (const m of ins.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)) {
        env.set(m[1] ?? '', (m[2] ?? '').replace(/^"|"$/g, ''));
      }
    }
  }
  return env;
}

// ---- configuration variables ------------------------------------------------------------------

/**
 * Every `AX_*` variable name written in the sources of the packages and services (their env
 * field definitions), so a deploy file cannot set a variable nothing reads.
 */
export function knownAxVariables(): Set<string> {
  const names = new Set<string>();
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist') visit(full);
      } else if (/\.(ts|mjs)$/.test(entry.name) && !entry.name.endsWith('.test.ts')) {
        for (const m of readFileSync(full, 'utf8').matchAll(/\bAX_[A-Z0-9_]+\b/g)) names.add(m[0]);
      }
    }
  };
  for (const top of ['packages', 'services', 'examples']) visit(path.join(repo, top));
  return names;
}

// ---- kustomize --------------------------------------------------------------------------------

/** Every resource `kubectl kustomize <dir>` renders (kubectl must be on the PATH), as plain data. */
export function renderKustomize(dir: string): unknown[] {
  const out = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
  return parseYamlDocuments(out, `kubectl kustomize ${path.relative(repo, dir)}`);
}
