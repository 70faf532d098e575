/** `axctl completion bash|zsh`: a completion script of the commands and their options. */
import { GLOBAL_OPTIONS } from '../args.js';
import type { CommandSpec } from '../command.js';
import { positionals, UsageError } from '../args.js';

/** The words after `axctl` and the options of each command (pure), for the scripts. */
export function completionTable(commands: readonly CommandSpec[]): { groups: string[]; subs: Record<string, string[]>; options: Record<string, string[]> } {
  const groups = [...new Set(commands.map((c) => c.name.split(' ')[0] as string))];
  const subs: Record<string, string[]> = {};
  const options: Record<string, string[]> = {};
  const globals = Object.entries(GLOBAL_OPTIONS).map(([n]) => `--${n}`);
  for (const c of commands) {
    const [group, sub] = c.name.split(' ') as [string, string | undefined];
    if (sub !== undefined) subs[group] = [...(subs[group] ?? []), sub];
    // a command's own `--team` (repeatable) stands for the global one: listed once
    options[c.name] = [...new Set([...Object.entries(c.options).flatMap(([n, o]) => [`--${n}`, ...(o.short === undefined ? [] : [`-${o.short}`])]), ...globals])];
  }
  return { groups, subs, options };
}

function bash(commands: readonly CommandSpec[]): string[] {
  const t = completionTable(commands);
  const cases = Object.entries(t.options).map(([name, opts]) => `    "${name}") opts="${opts.join(' ')}" ;;`);
  const subCases = Object.entries(t.subs).map(([g, subs]) => `    ${g}) subs="${subs.join(' ')}" ;;`);
  return [
    '# axctl bash completion: source <(axctl completion bash)',
    '_axctl() {',
    '  local cur="${COMP_WORDS[COMP_CWORD]}" words=() w',
    '  for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do [[ "$w" == -* ]] || words+=("$w"); done',
    '  if [[ "$cur" != -* && ${#words[@]} -eq 0 ]]; then COMPREPLY=($(compgen -W "' + t.groups.join(' ') + '" -- "$cur")); return; fi',
    '  local subs=""',
    '  case "${words[0]}" in',
    ...subCases,
    '  esac',
    '  if [[ "$cur" != -* && -n "$subs" && ${#words[@]} -eq 1 ]]; then COMPREPLY=($(compgen -W "$subs" -- "$cur")); return; fi',
    '  local name="${words[0]}"; [[ -n "$subs" ]] && name="${words[0]} ${words[1]}"',
    '  local opts=""',
    '  case "$name" in',
    ...cases,
    '  esac',
    '  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi',
    '}',
    'complete -o filenames -F _axctl axctl',
  ];
}

function zsh(commands: readonly CommandSpec[]): string[] {
  return ['#compdef axctl', '# axctl zsh completion: source <(axctl completion zsh)', 'autoload -U +X bashcompinit && bashcompinit', ...bash(commands).slice(1)];
}

/** The command; `commands` is read when it runs (it lists itself too). */
export function completionCommand(commands: () => readonly CommandSpec[]): CommandSpec {
  return {
    name: 'completion',
    synopsis: 'bash|zsh',
    summary: 'Print a shell completion script (commands, subcommands, options).',
    options: {},
    notes: ['bash:  source <(axctl completion bash)     (or save it to /etc/bash_completion.d/axctl)', 'zsh:   source <(axctl completion zsh)      (in ~/.zshrc)'],
    run: (ctx, args) => {
      const [shell] = positionals(args, ['shell'], ctx.command) as [string];
      if (shell !== 'bash' && shell !== 'zsh') throw new UsageError(`completion: expected bash or zsh, got ${JSON.stringify(shell)}`);
      (shell === 'bash' ? bash(commands()) : zsh(commands())).forEach((l) => ctx.io.out(l));
      return Promise.resolve();
    },
  };
}
