/**
 * YAML job files: one or more `---` documents, each a task definition (the same fields as the
 * JSON body). All or nothing: either every document is valid and every definition is returned,
 * or every issue of every document is, each naming its document (1-based), the source file
 * when given, and the field, e.g. `jobs.yaml document 2: schedule.expr: …`.
 *
 * Untrusted input is guarded, so that one team's file costs bounded time and memory (DESIGN §11
 * "Noisy neighbours", #45): at most `MAX_TASK_YAML_BYTES` and `MAX_TASK_YAML_DOCUMENTS` documents
 * (their `---` markers counted in one pass over the text before the YAML reader starts: a file
 * of 100,000 tiny documents costs milliseconds, not the 17 s of parsing it whole), collections
 * nested at most `TASK_YAML_MAX_DEPTH` deep and lines indented at most `TASK_YAML_MAX_INDENT`
 * columns (flow brackets and indentation in the same pass; block nesting again on the syntax
 * tree, before a document is built, whose builder recurses), at most `MAX_TASK_YAML_ISSUES`
 * issues reported (past them documents are only counted), aliases capped (`TASK_YAML_MAX_ALIAS_COUNT`, so an alias
 * bomb fails fast), documents that are not mappings refused, `__proto__` keys refused, duplicate
 * keys refused. Empty documents are ignored.
 *
 * `taskYamlSteps` is the parse as a generator that pauses after each document, so a server can
 * give its event loop back between documents; `parseTaskYaml` runs it in one go.
 */
import { Composer, isMap, isScalar, isSeq, LineCounter, Parser, type CST, type Document } from 'yaml';
import { toError, type Issue } from '../errors.js';
import { parseTaskDefinition, type ParseTaskOptions, type TaskDefinition } from './definition.js';

/** Largest YAML import accepted, bytes (1 MiB, the API's body limit). */
export const MAX_TASK_YAML_BYTES = 1_048_576;

/**
 * Cap on alias expansion (yaml's `maxAliasCount`): ordinary anchors (`*defaults` a few times)
 * pass; exponential "billion laughs" expansion is refused before it allocates.
 */
export const TASK_YAML_MAX_ALIAS_COUNT = 50;

/**
 * Most documents in one input (empty ones included), 2,000: more than a team's job files
 * hold (`axctl apply` sends a folder as one import), few enough that reading them all costs
 * well under a second of CPU. Past it the input is refused before the rest is read.
 */
export const MAX_TASK_YAML_DOCUMENTS = 2_000;

/** Most issues reported for one input; the rest are summed up in one last issue. */
export const MAX_TASK_YAML_ISSUES = 100;

/**
 * Deepest nesting of collections (mappings, sequences) in a document: 32, as for JSON bodies.
 * A task definition needs 4; the document builder recurses per level, so a deeper input could
 * exhaust the stack.
 */
export const TASK_YAML_MAX_DEPTH = 32;

/**
 * Widest indentation of a line, columns: the block collections of a task definition need a few
 * dozen; the YAML reader's time grows with deep block nesting (a 1 MiB staircase of 1,400 levels
 * took it a second), so a deeper line is refused before it is read.
 */
export const TASK_YAML_MAX_INDENT = 256;

/** A limit of the whole input that was passed: the input is refused as too large (an API answers 413). */
export interface TaskYamlLimit {
  readonly limit: 'bytes' | 'documents';
  readonly max: number;
}

/** One problem of a YAML import. `message` is complete: source, document, field and value. */
export interface TaskYamlIssue extends Issue {
  /** 1-based document number; absent when the problem concerns the whole input. */
  document?: number;
  /** The file name passed in, if any. */
  source?: string;
  /** 1-based line of the offending node, when known. */
  line?: number;
}

/** The outcome of `parseTaskYaml`: every definition, or every issue. */
export type TaskYamlResult = { ok: true; value: TaskDefinition[] } | { ok: false; issues: TaskYamlIssue[]; tooLarge?: TaskYamlLimit };

function prefix(source: string | undefined, document: number | undefined): string {
  const parts: string[] = [];
  if (source !== undefined) parts.push(source);
  if (document !== undefined) parts.push(`document ${document}`);
  return parts.join(' ');
}

function yamlIssue(
  at: { source: string | undefined; document?: number; line?: number },
  inner: Issue,
): TaskYamlIssue {
  const head = prefix(at.source, at.document);
  const issue: TaskYamlIssue = { path: inner.path, message: head === '' ? inner.message : `${head}: ${inner.message}` };
  if (at.document !== undefined) issue.document = at.document;
  if (at.source !== undefined) issue.source = at.source;
  if (at.line !== undefined) issue.line = at.line;
  return issue;
}

/** The line of the node at `path`, or of its nearest ancestor that exists. */
function lineOf(doc: Document.Parsed, lines: LineCounter, segments: ReadonlyArray<string | number>): number | undefined {
  for (let n = segments.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(segments.slice(0, n), true);
    const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
    if (range !== undefined) return lines.linePos(range[0]).line;
  }
  return undefined;
}

/** Splits an issue path (`exec.command[0]`, `exec.env["A B"]`) back into segments. */
function pathSegments(path: string): Array<string | number> {
  const segments: Array<string | number> = [];
  const token = /([^.[\]]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g;
  for (const match of path.matchAll(token)) {
    if (match[1] !== undefined) segments.push(match[1]);
    else if (match[2] !== undefined) segments.push(Number(match[2]));
    else if (match[3] !== undefined) segments.push(JSON.parse(match[3]) as string);
  }
  return segments;
}

function describeNode(contents: unknown): string {
  if (isSeq(contents)) return 'a sequence';
  if (isScalar(contents)) return `the scalar ${JSON.stringify(String(contents.value)).slice(0, 62)}`;
  return 'something else';
}

/** What the checks of one input share. */
interface CheckState {
  readonly lines: LineCounter;
  readonly source: string | undefined;
  readonly options: ParseTaskOptions;
  readonly issues: TaskYamlIssue[];
  /** Set once an issue past `MAX_TASK_YAML_ISSUES` came: from then on documents are only counted. */
  more: boolean;
  readonly definitions: TaskDefinition[];
  readonly firstDocumentOfName: Map<string, number>;
}

function report(state: CheckState, issue: TaskYamlIssue): void {
  if (state.issues.length < MAX_TASK_YAML_ISSUES) state.issues.push(issue);
  else state.more = true;
}

/** Checks document number `document`: its definition, or its issues. */
function checkDocument(state: CheckState, document: number, doc: Document.Parsed): void {
  const { lines, source } = state;
  const at = (line?: number): { source: string | undefined; document: number; line?: number } =>
    line === undefined ? { source, document } : { source, document, line };

  const problems = [...doc.errors, ...doc.warnings];
  if (problems.length > 0) {
    for (const problem of problems) {
      const pos = problem.linePos?.[0] ?? lines.linePos(problem.pos[0]);
      const where = pos === undefined ? '' : ` (line ${pos.line}, column ${pos.col})`;
      const kind = problem.name === 'YAMLWarning' ? 'YAML warning' : 'YAML syntax error';
      report(state, yamlIssue(at(pos?.line), { path: '', message: `${kind}: ${problem.message}${where}` }));
    }
    return;
  }
  const contents: unknown = doc.contents;
  if (contents === null || (isScalar(contents) && contents.value === null)) return; // empty document
  if (!isMap(contents)) {
    const line = lineOf(doc, lines, []);
    report(state, yamlIssue(at(line), { path: '', message: `a task definition must be a mapping, got ${describeNode(contents)}` }));
    return;
  }

  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: TASK_YAML_MAX_ALIAS_COUNT });
  } catch (thrown) {
    report(state, yamlIssue(at(), { path: '', message: `YAML could not be read: ${toError(thrown).message}` }));
    return;
  }

  const result = parseTaskDefinition(value, state.options);
  if (!result.ok) {
    for (const issue of result.issues) report(state, yamlIssue(at(lineOf(doc, lines, pathSegments(issue.path))), issue));
    return;
  }
  const name = result.value.name;
  const first = state.firstDocumentOfName.get(name);
  if (first !== undefined) {
    const line = lineOf(doc, lines, ['name']);
    report(state, yamlIssue(at(line), { path: 'name', message: `name: task ${JSON.stringify(name)} is already defined in document ${first}` }));
    return;
  }
  state.firstDocumentOfName.set(name, document);
  state.definitions.push(result.value);
}

/**
 * One pass over the text before the YAML reader sees it, which spends seconds on 100,000 nested
 * `[` (its lexer and parser keep a state per level): the first line whose flow brackets
 * (`[`, `{` not yet closed, counted from the document's start) or indentation go past the
 * limits. Quotes are not followed, so a bracket inside a string counts too: over-counting can
 * only refuse a document with dozens of unclosed brackets in its strings, never let a deep one
 * through. Returns the 1-based line and what was passed, or null.
 */
function shapeProblem(text: string): { line: number; message: string; tooLarge?: TaskYamlLimit } | null {
  let line = 1;
  let depth = 0;
  // `---` at the start of a line always starts a document (within a block scalar or a string
  // too), so the documents are counted here, before the reader spends ~0.1 ms on each.
  let documents = 1; // the first, with or without its marker
  let indent = 0;
  let atLineStart = true;
  let inComment = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 /* \n */) {
      line++;
      atLineStart = true;
      inComment = false;
      indent = 0;
      // a document marker starts the count again
      if (isDocumentStart(text, i + 1)) {
        depth = 0;
        if (++documents > MAX_TASK_YAML_DOCUMENTS) {
          return { line, message: `input holds more than ${MAX_TASK_YAML_DOCUMENTS} documents, the limit of one import; split it`, tooLarge: { limit: 'documents', max: MAX_TASK_YAML_DOCUMENTS } };
        }
      } else if (text.startsWith('...', i + 1)) depth = 0;
      continue;
    }
    if (atLineStart) {
      if (c === 32 /* space */) {
        if (++indent > TASK_YAML_MAX_INDENT) return { line, message: `line ${line} is indented deeper than ${TASK_YAML_MAX_INDENT} columns, the limit` };
        continue;
      }
      atLineStart = false;
    }
    if (inComment) continue;
    if (c === 35 /* # */ && (i === 0 || text.charCodeAt(i - 1) <= 32)) inComment = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > TASK_YAML_MAX_DEPTH) return { line, message: `collections nested deeper than ${TASK_YAML_MAX_DEPTH} levels, the limit (line ${line})` };
    } else if ((c === 93 /* ] */ || c === 125) /* } */ && depth > 0) depth--;
  }
  return null;
}

/** Whether a `---` document marker starts at `at` (a line's start). */
function isDocumentStart(text: string, at: number): boolean {
  if (!text.startsWith('---', at)) return false;
  const next = text.charCodeAt(at + 3);
  return Number.isNaN(next) || next === 32 || next === 9 || next === 10 || next === 13;
}

/** Nesting depth of collections in a document's syntax tree (iterative: the tree may be deep). */
function cstDepth(root: CST.Token | undefined): number {
  let deepest = 0;
  const stack: Array<{ token: CST.Token; depth: number }> = root === undefined ? [] : [{ token: root, depth: 0 }];
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const { token, depth } = entry;
    if (token.type !== 'block-map' && token.type !== 'block-seq' && token.type !== 'flow-collection') continue;
    const level = depth + 1;
    if (level > deepest) deepest = level;
    if (deepest > TASK_YAML_MAX_DEPTH) return deepest; // enough to refuse it
    for (const item of token.items as CST.CollectionItem[]) {
      if (item.key !== undefined && item.key !== null) stack.push({ token: item.key, depth: level });
      if (item.value !== undefined) stack.push({ token: item.value, depth: level });
    }
  }
  return deepest;
}

/**
 * Parses a YAML job file into task definitions (defaults applied). Never throws.
 *
 * @param text the file's contents.
 * @param source a file name to put in front of every message (e.g. `jobs.yaml`).
 * @param options as for `parseTaskDefinition`.
 */
export function parseTaskYaml(text: string, source?: string, options: ParseTaskOptions = {}): TaskYamlResult {
  const steps = taskYamlSteps(text, source, options);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/**
 * `parseTaskYaml` as a generator that yields after each document read (and after each one
 * checked), returning the result: a caller that must not hold its thread (admin-api) resumes it
 * a few documents at a time.
 */
export function* taskYamlSteps(text: string, source?: string, options: ParseTaskOptions = {}): Generator<void, TaskYamlResult, void> {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_TASK_YAML_BYTES) {
    return {
      ok: false,
      issues: [yamlIssue({ source }, { path: '', message: `input is ${bytes} bytes, over the ${MAX_TASK_YAML_BYTES}-byte (1 MiB) limit` })],
      tooLarge: { limit: 'bytes', max: MAX_TASK_YAML_BYTES },
    };
  }
  const shape = shapeProblem(text);
  if (shape?.tooLarge !== undefined) return { ok: false, issues: [yamlIssue({ source }, { path: '', message: shape.message })], tooLarge: shape.tooLarge };
  if (shape !== null) return { ok: false, issues: [yamlIssue({ source, line: shape.line }, { path: '', message: shape.message })] };
  const lines = new LineCounter();
  const state: CheckState = { lines, source, options, issues: [], more: false, definitions: [], firstDocumentOfName: new Map() };
  const composer = new Composer({ prettyErrors: false, logLevel: 'silent', uniqueKeys: true });
  const tokens = new Parser(lines.addNewLine).parse(text);
  // The composer hands a document back one token late (when the next one starts, or at the
  // end): the numbers of the documents given to it, in order, wait here for theirs.
  const pending: number[] = [];
  let documents = 0;
  try {
    for (let next = tokens.next(); next.done !== true; next = tokens.next()) {
      const token = next.value;
      if (token.type === 'document') {
        documents++;
        if (documents > MAX_TASK_YAML_DOCUMENTS) {
          return {
            ok: false,
            issues: [yamlIssue({ source }, { path: '', message: `input holds more than ${MAX_TASK_YAML_DOCUMENTS} documents, the limit of one import; split it` })],
            tooLarge: { limit: 'documents', max: MAX_TASK_YAML_DOCUMENTS },
          };
        }
        // Past the issues shown, the rest is only counted (the document limit still applies).
        if (state.more) {
          yield;
          continue;
        }
        if (cstDepth(token.value) > TASK_YAML_MAX_DEPTH) {
          // Never given to the composer, whose builder recurses once per level.
          report(state, yamlIssue({ source, document: documents, line: lines.linePos(token.offset).line }, { path: '', message: `collections nested deeper than ${TASK_YAML_MAX_DEPTH} levels, the limit` }));
          yield;
          continue;
        }
        pending.push(documents);
      }
      if (state.more) continue;
      for (const doc of composer.next(token)) checkDocument(state, pending.shift() ?? documents, doc);
      if (token.type === 'document') yield;
    }
    if (!state.more) for (const doc of composer.end()) checkDocument(state, pending.shift() ?? documents, doc);
  } catch (thrown) {
    return { ok: false, issues: [yamlIssue({ source }, { path: '', message: `YAML could not be read: ${toError(thrown).message}` })] };
  }
  const { issues, definitions } = state;
  // in document order (a document too deep to build is reported before the one read just before it)
  issues.sort((a, b) => (a.document ?? 0) - (b.document ?? 0));
  if (state.more) issues.push(yamlIssue({ source }, { path: '', message: `more issues not shown: only the first ${MAX_TASK_YAML_ISSUES} are reported` }));
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: definitions };
}
