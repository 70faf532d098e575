/**
 * The form view of a task draft: the common fields (name, team, schedule, exec and its main
 * field, timeout, retry, tags, enabled, dependsOn). Each field shows the API's message for it.
 * Every other field of the draft is kept as it is (edit it in the YAML view).
 */
// A pure module of core with its own export (no zod): core's index holds Node code the browser
// bundle must not take (as DiffView's line-diff).
// eslint-disable-next-line no-restricted-imports
import { DEFAULT_RETRY } from '@ax/core/retry-defaults';
import type { ReactNode } from 'react';
import { commandOf, commandText, getField, numberOrText, parentsOf, setField, tagsOf, textOf, withExecType, withParents, withScheduleType, type Parent } from './draft-form';
import type { FormField } from './field-errors';
import type { Draft } from './task-yaml';

const ZONES: readonly string[] = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : ['UTC'];

function FieldError({ field, errors }: { field: FormField; errors: Partial<Record<FormField, string[]>> }) {
  const messages = errors[field];
  if (messages === undefined || messages.length === 0) return null;
  return (
    <small className="field-error" id={`err-${field}`} data-field-error={field} role="alert">
      {messages.join(' · ')}
    </small>
  );
}

interface Props {
  draft: Draft;
  onChange: (next: Draft) => void;
  errors: Partial<Record<FormField, string[]>>;
  /** Name is fixed on an edit (renaming is not supported by the API). */
  nameLocked: boolean;
  readOnly: boolean;
  teams: readonly string[];
  tasks: readonly string[];
}

export function TaskForm({ draft, onChange, errors, nameLocked, readOnly, teams, tasks }: Props) {
  const set = (path: string, value: unknown) => onChange(setField(draft, path, value));
  const invalid = (field: FormField) => (errors[field] === undefined ? {} : { 'aria-invalid': true as const, 'aria-describedby': `err-${field}` });
  const field = (label: string, f: FormField, input: ReactNode, hint?: string) => (
    <label>
      {label}
      {input}
      <FieldError field={f} errors={errors} />
      {hint !== undefined && errors[f] === undefined && <small className="muted">{hint}</small>}
    </label>
  );
  const scheduleType = textOf(draft, 'schedule.type') || 'none';
  const execType = textOf(draft, 'exec.type') || 'shell';
  const parents = parentsOf(draft);
  const setParents = (next: Parent[]) => onChange(withParents(draft, next));

  return (
    <fieldset className="editor-form" disabled={readOnly} data-testid="task-form">
      <div className="grid-2 tight">
        {field('Name', 'name', <input name="name" value={textOf(draft, 'name')} readOnly={nameLocked} {...invalid('name')} onChange={(e) => set('name', e.target.value)} />, nameLocked ? 'A task cannot be renamed.' : 'a-z, 0-9, _ . - (unique)')}
        {field(
          'Team',
          'team',
          <input name="team" list="authoring-teams" value={textOf(draft, 'team')} placeholder="default" {...invalid('team')} onChange={(e) => set('team', e.target.value === '' ? undefined : e.target.value)} />,
        )}
      </div>
      <datalist id="authoring-teams">
        {teams.map((t) => (
          <option key={t} value={t} />
        ))}
      </datalist>
      <div className="grid-2 tight">
        {field(
          'Schedule',
          'schedule.type',
          <select name="schedule.type" value={scheduleType} {...invalid('schedule.type')} onChange={(e) => onChange(withScheduleType(draft, e.target.value))}>
            <option value="cron">cron</option>
            <option value="fixed_rate">fixed rate</option>
            <option value="once">once</option>
            <option value="none">none (manual / dependency only)</option>
          </select>,
        )}
        {scheduleType === 'cron' &&
          field('Cron expression', 'schedule.expr', <input name="schedule.expr" className="code-input" value={textOf(draft, 'schedule.expr')} {...invalid('schedule.expr')} onChange={(e) => set('schedule.expr', e.target.value)} />, '5 fields, or 6 with seconds first')}
        {scheduleType === 'fixed_rate' &&
          field('Every (seconds)', 'schedule.everySeconds', <input name="schedule.everySeconds" inputMode="numeric" value={textOf(draft, 'schedule.everySeconds')} {...invalid('schedule.everySeconds')} onChange={(e) => set('schedule.everySeconds', numberOrText(e.target.value))} />)}
        {scheduleType === 'once' &&
          field('At (ISO time, UTC)', 'schedule.at', <input name="schedule.at" value={textOf(draft, 'schedule.at')} {...invalid('schedule.at')} onChange={(e) => set('schedule.at', e.target.value)} />)}
      </div>
      {scheduleType === 'cron' &&
        field(
          'Time zone',
          'schedule.timezone',
          <input name="schedule.timezone" list="authoring-zones" value={textOf(draft, 'schedule.timezone')} placeholder="UTC" {...invalid('schedule.timezone')} onChange={(e) => set('schedule.timezone', e.target.value === '' ? undefined : e.target.value)} />,
          'IANA name, e.g. Asia/Shanghai',
        )}
      <datalist id="authoring-zones">
        {ZONES.map((z) => (
          <option key={z} value={z} />
        ))}
      </datalist>
      <div className="grid-2 tight">
        {field(
          'Exec type',
          'exec.type',
          <select name="exec.type" value={execType} {...invalid('exec.type')} onChange={(e) => onChange(withExecType(draft, e.target.value))}>
            {['shell', 'http', 'python', 'sql', 'plugin'].map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>,
          execType === 'shell' || execType === 'http' ? undefined : 'its fields are edited in the YAML view',
        )}
        {execType === 'http' &&
          field('URL', 'exec.url', <input name="exec.url" type="url" value={textOf(draft, 'exec.url')} {...invalid('exec.url')} onChange={(e) => set('exec.url', e.target.value)} />)}
      </div>
      {execType === 'shell' &&
        field(
          'Command (one argument per line)',
          'exec.command',
          <textarea name="exec.command" rows={3} className="code-input" spellCheck={false} value={commandText(draft)} {...invalid('exec.command')} onChange={(e) => set('exec.command', commandOf(e.target.value))} />,
          'argv, no shell: {{bizDate}} and {{params.key}} are expanded',
        )}
      <div className="grid-2 tight">
        {field('Timeout (seconds)', 'timeoutSeconds', <input name="timeoutSeconds" inputMode="numeric" value={textOf(draft, 'timeoutSeconds')} placeholder="3600" {...invalid('timeoutSeconds')} onChange={(e) => set('timeoutSeconds', numberOrText(e.target.value))} />)}
        {field('Tags (comma-separated)', 'tags', <input name="tags" value={(getField(draft, 'tags') as string[] | undefined)?.join(', ') ?? ''} {...invalid('tags')} onChange={(e) => set('tags', tagsOf(e.target.value))} />, 'a worker must carry every tag')}
      </div>
      <div className="grid-2 tight">
        {field('Retries (max)', 'retry.max', <input name="retry.max" inputMode="numeric" value={textOf(draft, 'retry.max')} placeholder={String(DEFAULT_RETRY.max)} {...invalid('retry.max')} onChange={(e) => set('retry.max', numberOrText(e.target.value))} />)}
        {field('Retry backoff (seconds)', 'retry.backoffSeconds', <input name="retry.backoffSeconds" inputMode="numeric" value={textOf(draft, 'retry.backoffSeconds')} placeholder={String(DEFAULT_RETRY.backoffSeconds)} {...invalid('retry.backoffSeconds')} onChange={(e) => set('retry.backoffSeconds', numberOrText(e.target.value))} />)}
      </div>
      <label>
        <input type="checkbox" role="switch" name="enabled" checked={getField(draft, 'enabled') !== false} onChange={(e) => set('enabled', e.target.checked)} />
        Enabled (scheduled)
        <FieldError field="enabled" errors={errors} />
      </label>
      <fieldset data-testid="depends-on">
        <legend>Depends on (parents of the same business date)</legend>
        <datalist id="authoring-tasks">
          {tasks.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
        {parents.map((p, index) => (
          <div className="parent-row" key={index}>
            <input
              name={`dependsOn.${index}.task`}
              aria-label={`Parent ${index + 1}`}
              list="authoring-tasks"
              value={p.task}
              onChange={(e) => setParents(parents.map((q, k) => (k === index ? { ...q, task: e.target.value } : q)))}
            />
            <select aria-label={`Rule of parent ${index + 1}`} value={p.rule} onChange={(e) => setParents(parents.map((q, k) => (k === index ? { ...q, rule: e.target.value === 'ALL_DONE' ? 'ALL_DONE' : 'ALL_SUCCESS' } : q)))}>
              <option value="ALL_SUCCESS">all succeeded</option>
              <option value="ALL_DONE">all done</option>
            </select>
            <button type="button" className="secondary outline small" onClick={() => setParents(parents.filter((_, k) => k !== index))}>
              Remove
            </button>
          </div>
        ))}
        <FieldError field="dependsOn" errors={errors} />
        <button type="button" className="secondary outline small" data-action="add-parent" onClick={() => setParents([...parents, { task: '', rule: 'ALL_SUCCESS' }])}>
          Add a parent
        </button>
      </fieldset>
    </fieldset>
  );
}
