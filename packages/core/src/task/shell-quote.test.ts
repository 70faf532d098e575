import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { shellPlaceholderProblems, shellQuote } from './shell-quote.js';

// The real shells a `shell: true` job may meet as /bin/sh: dash (Debian's sh) and bash.
const SHELLS = ['/bin/sh', 'bash'];
const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-shell-quote-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(shell: string, script: string): { status: number | null; stdout: string } {
  const out = spawnSync(shell, ['-c', script], { cwd: dir, env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (out.error !== undefined) throw out.error;
  return { status: out.status, stdout: out.stdout };
}

const NASTY = [
  'a; rm -rf ~',
  '$(id)',
  '`id`',
  'a\nid',
  "it's",
  "'; id; '",
  '"; id; "',
  'a | id & id',
  '* ?',
  '~root',
  '\\',
  '',
  ' leading and trailing ',
  '$HOME ${HOME} $((1+1))',
  "\\'",
  '#not a comment',
  '-n',
];

describe('shellQuote', () => {
  it('writes a value as one single-quoted word, each quote as \'\\\'\'', () => {
    expect(shellQuote('a; rm -rf ~')).toBe("'a; rm -rf ~'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote('')).toBe("''");
  });

  it('#18.5 every nasty value reaches the program as one literal argument in dash and bash', () => {
    for (const shell of SHELLS) {
      for (const value of NASTY) {
        expect({ shell, value, out: run(shell, `printf '[%s]' ${shellQuote(value)}`) }).toEqual({ shell, value, out: { status: 0, stdout: `[${value}]` } });
      }
    }
  });

  it('#18.5 any string without NUL comes out of dash and bash unchanged', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\0')), (value) => {
        for (const shell of SHELLS) expect(run(shell, `printf '%s' ${shellQuote(value)}`).stdout).toBe(value);
      }),
      { numRuns: 150, seed: 185 },
    );
  });
});

const where = (command: string[]): Array<[number, string]> => shellPlaceholderProblems(command, PLACEHOLDER).map((p) => [p.index, p.where]);

describe('shellPlaceholderProblems', () => {
  it('accepts placeholders in plain script text, in any element, beside $(…) and "…"', () => {
    for (const command of [
      ['echo', '{{params.x}}'],
      ['run', '--date={{bizDate}}', '/data/{{bizDate}}/{{params.x}}.csv'],
      ['echo "$(date)" {{params.x}} "$HOME"'],
      ['tar', 'czf', '/b/$(date +%F)-{{params.x}}.tgz'],
      ['echo $( (echo a) ) $((1 + 2)) ${HOME} {{params.x}}'],
      ['echo', 'a#b', '{{params.x}}', '# a comment', '\n', 'echo {{params.y}}'],
      ['echo "it\'s" \\"', '{{params.x}}'],
      ['$(echo "$(echo \')\')")', '{{params.x}}'],
      ['X={{params.x}}', 'env'],
    ]) {
      expect({ command, problems: where(command) }).toEqual({ command, problems: [] });
    }
  });

  it('names every placeholder inside quotes or other syntax, with its element', () => {
    expect(where(['echo', '"{{bizDate}}"'])).toEqual([[1, 'inside double quotes']]);
    expect(where(['echo', "'{{params.x}}'"])).toEqual([[1, 'inside single quotes']]);
    expect(where(['echo', '"a', 'b {{params.x}}"'])).toEqual([[2, 'inside double quotes']]);
    expect(where(['echo "$(echo "{{params.x}}")"'])).toEqual([[0, 'inside double quotes']]);
    expect(where(['echo `echo {{params.x}}`'])).toEqual([[0, 'inside backquotes']]);
    expect(where(['echo ${A:-{{params.x}}}'])).toEqual([[0, 'inside ${…}']]);
    expect(where(['echo $(( {{params.n}} + 1 ))'])).toEqual([[0, 'inside $((…))']]);
    expect(where(['echo a', '# {{params.x}}'])).toEqual([[1, 'inside a comment']]);
    expect(where(['echo \\{{params.x}}'])).toEqual([[0, 'right after a backslash']]);
    expect(where(['echo ${{params.x}}'])).toEqual([[0, 'right after $']]);
  });

  it('refuses every placeholder after a construct it does not follow', () => {
    const lost = (command: string[]): string[] => shellPlaceholderProblems(command, PLACEHOLDER).map((p) => p.where);
    expect(lost(['cat <<EOF\n{{params.x}}\nEOF'])).toEqual(['after a here-document (<<), which ax cannot follow']);
    expect(lost(["echo $'a\\'b' {{params.x}}"])).toEqual(["after $'…' (bash and dash read it differently), which ax cannot follow"]);
    expect(lost(['echo "$(case x in a) echo " {{params.x}} ";; esac)"'])).toEqual(['after case … in inside $(…), which ax cannot follow']);
    expect(lost(['echo `echo "a"` {{params.x}}', '{{params.y}}'])).toHaveLength(2);
    expect(lost(['echo ${A:-"b"} {{params.x}}'])).toHaveLength(1);
  });
});

// Differential check against the real shells: random scripts made of shell syntax and
// placeholders; whenever the lexer accepts every placeholder, the script with each placeholder
// replaced by a quoted attack value must not run the attack in dash or bash, whatever context
// the value lands in (each attack works in one context: unquoted, "…", '…', `…`, a comment,
// after a backslash, as bash's $'…').
const ATTACKS = [';touch M;#', '$(touch M)', "';touch M;'", '`touch M`', '\ntouch M\n', "\\';touch M;#", '";touch M;"'];
const TOKENS = ['echo', ' ', ' ', '{{x}}', '{{x}}', '{{x}}', "'", '"', '`', '$(', '$((', '(', ')', '${', '}', '\\', '#', '\n', ';', '<<', 'case ', ' in ', 'a)', ';;', 'esac', '$', "$'", '$"', 'a', '|', '='];
const commandArbitrary = fc.array(
  fc.array(fc.constantFrom(...TOKENS), { maxLength: 8 }).map((tokens) => tokens.join('')),
  { minLength: 1, maxLength: 3 },
);

describe('shellPlaceholderProblems against dash and bash', () => {
  it('#18.5 a quoted value in a place it accepts never runs as a command', () => {
    let accepted = 0;
    fc.assert(
      fc.property(commandArbitrary, (command) => {
        if (!command.some((text) => text.includes('{{x}}'))) return;
        if (shellPlaceholderProblems(command, PLACEHOLDER).length > 0) return;
        accepted += 1;
        for (const attack of ATTACKS) {
          const script = command.map((text) => text.replace(PLACEHOLDER, () => shellQuote(attack))).join(' ');
          for (const shell of SHELLS) {
            run(shell, script);
            const marker = path.join(dir, 'M');
            const ran = existsSync(marker);
            rmSync(marker, { force: true });
            expect({ shell, command, attack, ran }).toEqual({ shell, command, attack, ran: false });
          }
        }
      }),
      { numRuns: 400, seed: 0x185 },
    );
    expect(accepted).toBeGreaterThan(50);
  });

  it('#18.5 every place it refuses is one where the quoted value would run in dash or bash', () => {
    const cases: Array<[string, string]> = [
      ['echo "{{x}}"', '$(touch M)'],
      ["echo '{{x}}'", ';touch M;#'],
      ['echo a # {{x}}', '\ntouch M\n'],
      ['echo \\{{x}}', ';touch M;#'],
      ['echo ${{x}}', "\\';touch M;#"],
      ['echo `echo {{x}}`', '`;touch M;#'],
      ['cat <<EOF\n{{x}}\nEOF', '$(touch M)'],
      ["echo $'a\\'b' {{x}}", ';touch M;#'],
      ['echo "$(case a in a) echo " {{x}} ";; esac)"', '$(touch M)'],
    ];
    for (const [text, attack] of cases) {
      const script = text.replace(PLACEHOLDER, () => shellQuote(attack));
      const ranIn = SHELLS.filter((shell) => {
        run(shell, script);
        const ran = existsSync(path.join(dir, 'M'));
        rmSync(path.join(dir, 'M'), { force: true });
        return ran;
      });
      expect({ text, refused: shellPlaceholderProblems([text], PLACEHOLDER).length > 0, runs: ranIn.length > 0 }).toEqual({ text, refused: true, runs: true });
    }
  });
});
