/**
 * YAML job files: one or more `---` documents, each a task definition (the same fields as the
 * JSON body). All or nothing: either every document is valid and every definition is returned,
 * or every issue of every document is, each naming its document (1-based), the source file
 * when given, and the field, e.g. `jobs.yaml document 2: schedule.expr: …`.
 *
 * Untrusted input is guarded: at most `MAX_TASK_YAML_BYTES`, aliases capped
 * (`TASK_YAML_MAX_ALIAS_COUNT`, so an alias bomb fails fast), documents that are not mappings
 * refused, `__proto__` keys refused, duplicate keys refused. Empty documents are ignored.
 */
import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Document } from 'yaml';
import { toError, type Issue } from '../errors.js';
import { parseTaskDefinition, type ParseTaskOptions, type TaskDefinition } from './definition.js';

/** Largest YAML import accepted, bytes (1 MiB, the API's body limit). */
export const MAX_TASK_YAML_BYTES = 1_048_576;

/**
 * Cap on alias expansion (yaml's `maxAliasCount`): ordinary anchors (`*defaults` a few times)
 * pass; exponential "billion laughs" expansion is refused before it allocates.
 */
export const TASK_YAML_MAX_ALIAS_COUNT = 50;

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
export type TaskYamlResult = { ok: true; value: TaskDefinition[] } | { ok: false; issues: TaskYamlIssue[] };

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

/**
 * Parses a YAML job file into task definitions (defaults applied). Never throws.
 *
 * @param text the file's contents.
 * @param source a file name to put in front of every message (e.g. `jobs.yaml`).
 * @param options as for `parseTaskDefinition`.
 */
export function parseTaskYaml(text: string, source?: string, options: ParseTaskOptions = {}): TaskYamlResult {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_TASK_YAML_BYTES) {
    return {
      ok: false,
      issues: [yamlIssue({ source }, { path: '', message: `input is ${bytes} bytes, over the ${MAX_TASK_YAML_BYTES}-byte (1 MiB) limit` })],
    };
  }
  const lines = new LineCounter();
  let docs: Document.Parsed[];
  try {
    const parsed = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, logLevel: 'silent', uniqueKeys: true });
    docs = Array.isArray(parsed) ? parsed : [];
  } catch (thrown) {
    return { ok: false, issues: [yamlIssue({ source }, { path: '', message: `YAML could not be read: ${toError(thrown).message}` })] };
  }

  const issues: TaskYamlIssue[] = [];
  const definitions: TaskDefinition[] = [];
  const firstDocumentOfName = new Map<string, number>();

  docs.forEach((doc, index) => {
    const document = index + 1;
    const at = (line?: number): { source: string | undefined; document: number; line?: number } =>
      line === undefined ? { source, document } : { source, document, line };

    const problems = [...doc.errors, ...doc.warnings];
    if (problems.length > 0) {
      for (const problem of problems) {
        const pos = problem.linePos?.[0] ?? lines.linePos(problem.pos[0]);
        const where = pos === undefined ? '' : ` (line ${pos.line}, column ${pos.col})`;
        const kind = problem.name === 'YAMLWarning' ? 'YAML warning' : 'YAML syntax error';
        issues.push(yamlIssue(at(pos?.line), { path: '', message: `${kind}: ${problem.message}${where}` }));
      }
      return;
    }
    const contents: unknown = doc.contents;
    if (contents === null || (isScalar(contents) && contents.value === null)) return; // empty document
    if (!isMap(contents)) {
      const line = lineOf(doc, lines, []);
      issues.push(yamlIssue(at(line), { path: '', message: `a task definition must be a mapping, got ${describeNode(contents)}` }));
      return;
    }

    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: TASK_YAML_MAX_ALIAS_COUNT });
    } catch (thrown) {
      issues.push(yamlIssue(at(), { path: '', message: `YAML could not be read: ${toError(thrown).message}` }));
      return;
    }

    const result = parseTaskDefinition(value, options);
    if (!result.ok) {
      for (const issue of result.issues) issues.push(yamlIssue(at(lineOf(doc, lines, pathSegments(issue.path))), issue));
      return;
    }
    const name = result.value.name;
    const first = firstDocumentOfName.get(name);
    if (first !== undefined) {
      const line = lineOf(doc, lines, ['name']);
      issues.push(yamlIssue(at(line), { path: 'name', message: `name: task ${JSON.stringify(name)} is already defined in document ${first}` }));
      return;
    }
    firstDocumentOfName.set(name, document);
    definitions.push(result.value);
  });

  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: definitions };
}
