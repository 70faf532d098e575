/**
 * `axctl tasks apply --team NAME`: puts the team into every document of a YAML job file that
 * names none, and refuses a document naming another one. The text is changed only by adding a
 * `team: NAME` line at the end of such a document (so the API's line numbers stay right), and
 * the result is parsed again with the API's own parser to prove every task now has that team.
 */
import { DEFAULT_TEAM, parseTaskYaml } from '@ax/core';

/** The file to send, or why not. */
export type WithTeam = { ok: true; yaml: string } | { ok: false; message: string };

/** A line that starts a document (`---`, `--- …`). */
const DOCUMENT_START = /^---(?:[ \t\r]|$)/;
/** A line that ends a document (`...`). */
const DOCUMENT_END = /^\.\.\.(?:[ \t\r]|$)/;
/** A top-level `team:` key of a block mapping. */
const TEAM_KEY = /^(?:team|"team"|'team')[ \t]*:(?:[ \t\r]|$)/;

/** Whether a line holds YAML content (not blank, not a comment, not a directive). */
function isContent(line: string): boolean {
  return !/^[ \t]*(?:#.*)?\r?$/.test(line) && !line.startsWith('%');
}

/** Splits a YAML stream into its documents' lines, markers included (each document's first line may be its `---`). */
function documents(lines: readonly string[]): string[][] {
  const out: string[][] = [[]];
  for (const line of lines) {
    if (DOCUMENT_START.test(line)) out.push([line]);
    else (out[out.length - 1] as string[]).push(line);
    if (DOCUMENT_END.test(line)) out.push([]);
  }
  return out;
}

/** Whether a document's lines hold anything (the `---` line counts for what follows it on the line). */
function hasContent(doc: readonly string[]): boolean {
  return doc.some((line) => (DOCUMENT_START.test(line) ? isContent(line.slice(3)) : !DOCUMENT_END.test(line) && isContent(line)));
}

/**
 * `yaml` with `team: <team>` added to each task definition that names no team. A document naming
 * another team is an error, unless `othersAllowed` (the team came from the token, not from
 * `--team`: such a document keeps its team and the API decides).
 * A file the API would refuse anyway is returned unchanged (the API then names its problems).
 */
export function withTeam(yaml: string, team: string, opts: { othersAllowed?: boolean } = {}): WithTeam {
  const parsed = parseTaskYaml(yaml);
  if (!parsed.ok) return { ok: true, yaml };
  const lines = yaml.split('\n');
  // The empty string after a final newline is no line of the last document.
  const finalNewline = lines.length > 1 && lines[lines.length - 1] === '';
  if (finalNewline) lines.pop();
  const all = documents(lines);
  const docs = all.filter(hasContent); // the same arrays: a line pushed onto one is in `all`
  const cannot: WithTeam = { ok: false, message: `cannot add team ${JSON.stringify(team)} to the file; write "team: ${team}" in each document instead of --team` };
  if (docs.length !== parsed.value.length) return cannot;

  const conflicts: string[] = [];
  docs.forEach((doc, n) => {
    const def = parsed.value[n];
    if (def === undefined || def.team === team) return;
    const named = doc.some((line) => TEAM_KEY.test(line));
    if ((named || def.team !== DEFAULT_TEAM) && opts.othersAllowed === true) return; // its own team: the API decides
    if (named || def.team !== DEFAULT_TEAM) {
      conflicts.push(`document ${n + 1} (task ${JSON.stringify(def.name)}) names team ${JSON.stringify(def.team)}, not --team ${JSON.stringify(team)}`);
    } else if (DOCUMENT_END.test(doc[doc.length - 1] ?? '')) {
      doc.splice(doc.length - 1, 0, `team: ${team}`); // before its `...`
    } else {
      doc.push(`team: ${team}`);
    }
  });
  if (conflicts.length > 0) return { ok: false, message: conflicts.join('; ') };

  const text = all.flat().join('\n') + (finalNewline ? '\n' : '');
  // Proof: the API's parser reads the same tasks, every one of them now of `team`.
  const again = parseTaskYaml(text);
  const placedIn = (n: number): string | undefined => (opts.othersAllowed === true && parsed.value[n]?.team !== DEFAULT_TEAM ? parsed.value[n]?.team : team);
  if (!again.ok || again.value.length !== parsed.value.length || again.value.some((def, n) => def.team !== placedIn(n) || def.name !== parsed.value[n]?.name)) return cannot;
  return { ok: true, yaml: text };
}
