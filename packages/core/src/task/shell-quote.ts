/**
 * Template values under `shell: true` (issue #18 item 5). The command's elements are joined with
 * spaces into one script for `/bin/sh -c`, so a value pasted in raw could end the word, start a
 * command or expand (`a; rm -rf ~`, `$(id)`, backquotes, a newline). Each value is therefore
 * written as one single-quoted word (`'` → `'\''`), which POSIX sh, dash and bash all read
 * literally — but only where the placeholder stands in plain, unquoted script text.
 *
 * Inside quotes the same quoting is wrong or unsafe: in `"{{x}}"` the single quotes are literal
 * and `$(…)` in the value still runs; in `'{{x}}'` the value ends the quote. So every placeholder
 * is located with a small lexer over the joined script, and one that is not in plain text is a
 * problem: inside '…', "…", `…`, ${…}, $((…)) or a comment, or right after a backslash or a `$`.
 * The lexer follows only what it knows; after a construct whose end it cannot find the same way
 * every shell does (a here-document, `$'…'`, `case` inside `$(…)`, quotes inside backquotes or
 * `${…}`), every later placeholder is a problem too. It errs towards refusing, never towards
 * pasting a value where it could be read as syntax.
 */

/** `value` as one POSIX shell word that nothing expands: single-quoted, each `'` as `'\''`. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** A placeholder that cannot be replaced by one quoted word where it stands. */
export interface ShellPlaceholderProblem {
  /** Index of the command element the placeholder is in. */
  readonly index: number;
  /** The placeholder as written, e.g. `{{params.x}}`. */
  readonly placeholder: string;
  /** Where it stands, e.g. `inside double quotes`. */
  readonly where: string;
}

type Frame =
  | { readonly kind: 'single' | 'double' | 'backquote' | 'param' | 'comment' }
  | { readonly kind: 'command'; depth: number; readonly arithmetic: boolean };

const WHERE: Readonly<Record<Exclude<Frame['kind'], 'command'>, string>> = {
  single: 'inside single quotes',
  double: 'inside double quotes',
  backquote: 'inside backquotes',
  param: 'inside ${…}',
  comment: 'inside a comment',
};

/** After these (unquoted) a new word starts, so `#` there begins a comment. */
const WORD_BREAKS = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>']);

/** Reads the joined script one character at a time; see the file comment. */
class ShellLexer {
  private readonly stack: Frame[] = [];
  private escaped = false;
  private afterDollar = false;
  private wordStart = true;
  private lost: string | undefined;

  /** Where a placeholder at the current position stands, or `undefined` when in plain text. */
  placeholder(): string | undefined {
    const where = this.whereNow();
    this.escaped = false;
    this.afterDollar = false;
    this.wordStart = false;
    return where;
  }

  private whereNow(): string | undefined {
    if (this.lost !== undefined) return `after ${this.lost}, which ax cannot follow`;
    if (this.escaped) return 'right after a backslash';
    if (this.afterDollar) return 'right after $';
    const frame = this.stack.at(-1);
    if (frame === undefined) return undefined;
    if (frame.kind !== 'command') return WHERE[frame.kind];
    return frame.arithmetic ? 'inside $((…))' : undefined;
  }

  /**
   * Reads the character at `text[i]` (looking ahead within `text`); returns how many characters
   * it took. `placeholderAt(j)` tells whether a placeholder starts at `j`.
   */
  read(text: string, i: number, placeholderAt: (j: number) => boolean): number {
    const c = text[i] ?? '';
    this.afterDollar = false;
    if (this.lost !== undefined) return 1;
    if (this.escaped) {
      this.escaped = false;
      this.wordStart = false;
      return 1;
    }
    const frame = this.stack.at(-1);
    switch (frame?.kind) {
      case 'comment':
        if (c === '\n') {
          this.stack.pop();
          this.wordStart = true;
        }
        return 1;
      case 'single':
        if (c === "'") this.stack.pop();
        return 1;
      case 'backquote':
        if (c === '\\') this.escaped = true;
        else if (c === '`') this.stack.pop();
        else if (c === "'" || c === '"' || c === '#') this.lose('quotes or # inside backquotes');
        else if (c === '$' && (text[i + 1] === '(' || text[i + 1] === '{')) this.lose('$(…) or ${…} inside backquotes');
        else if (c === '<' && text[i + 1] === '<') this.lose('a here-document (<<)');
        return 1;
      case 'param':
        if (c === '}') this.stack.pop();
        else if ('\'"`$({\\'.includes(c)) this.lose('quotes or nesting inside ${…}');
        return 1;
      case 'double':
        if (c === '\\') this.escaped = true;
        else if (c === '"') this.stack.pop();
        else if (c === '`') this.stack.push({ kind: 'backquote' });
        else if (c === '$') return this.dollar(text, i, placeholderAt, true);
        return 1;
      case 'command':
      case undefined:
        return this.unquoted(c, text, i, placeholderAt, frame);
    }
  }

  private unquoted(c: string, text: string, i: number, placeholderAt: (j: number) => boolean, frame: Frame | undefined): number {
    const command = frame?.kind === 'command' ? frame : undefined;
    if (command !== undefined && this.wordStart && /^case[ \t\n]/.test(text.slice(i, i + 5))) {
      this.lose('case … in inside $(…)');
      return 1;
    }
    const atWordStart = this.wordStart;
    this.wordStart = false;
    if (c === '\\') this.escaped = true;
    else if (c === "'") this.stack.push({ kind: 'single' });
    else if (c === '"') this.stack.push({ kind: 'double' });
    else if (c === '`') this.stack.push({ kind: 'backquote' });
    else if (c === '$') return this.dollar(text, i, placeholderAt, false);
    else if (c === '#' && atWordStart) this.stack.push({ kind: 'comment' });
    else if (c === '<' && text[i + 1] === '<') this.lose('a here-document (<<)');
    else if (command !== undefined && c === ')' && command.depth === 0) this.stack.pop();
    else {
      if (command !== undefined && c === '(') command.depth += 1;
      if (command !== undefined && c === ')') command.depth -= 1;
      this.wordStart = WORD_BREAKS.has(c);
    }
    return 1;
  }

  /** `$` at `text[i]`: `$(`, `$((`, `${`, `$'`, `$"` or a plain `$`. */
  private dollar(text: string, i: number, placeholderAt: (j: number) => boolean, quoted: boolean): number {
    this.wordStart = false;
    if (placeholderAt(i + 1)) {
      this.afterDollar = true;
      return 1;
    }
    const next = text[i + 1];
    if (next === '(' && text[i + 2] === '(') {
      this.stack.push({ kind: 'command', depth: 1, arithmetic: true });
      return 3;
    }
    if (next === '(') {
      this.stack.push({ kind: 'command', depth: 0, arithmetic: false });
      this.wordStart = true;
      return 2;
    }
    if (next === '{') {
      this.stack.push({ kind: 'param' });
      return 2;
    }
    if (next === "'" && !quoted) this.lose("$'…' (bash and dash read it differently)");
    return 1;
  }

  private lose(what: string): void {
    this.lost = what;
  }
}

/**
 * Every placeholder of `command` (matched by the global `pattern`) that does not stand in plain
 * script text once the elements are joined with spaces, as `/bin/sh -c` gets them. `[]` when
 * every placeholder can be replaced by one `shellQuote`d word.
 */
export function shellPlaceholderProblems(command: readonly string[], pattern: RegExp): ShellPlaceholderProblem[] {
  const placeholders = new Map<number, { index: number; placeholder: string }>();
  let offset = 0;
  command.forEach((text, index) => {
    for (const match of text.matchAll(pattern)) placeholders.set(offset + match.index, { index, placeholder: match[0] });
    offset += text.length + 1;
  });
  const script = command.join(' ');
  const placeholderAt = (j: number): boolean => placeholders.has(j);
  const lexer = new ShellLexer();
  const problems: ShellPlaceholderProblem[] = [];
  let i = 0;
  while (i < script.length) {
    const found = placeholders.get(i);
    if (found === undefined) {
      i += lexer.read(script, i, placeholderAt);
      continue;
    }
    const where = lexer.placeholder();
    if (where !== undefined) problems.push({ ...found, where });
    i += found.placeholder.length;
  }
  return problems;
}
