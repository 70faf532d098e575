/**
 * Task authoring: `/tasks/new` creates (`POST /api/v1/tasks`), `/tasks/:name/edit` replaces
 * (`PUT /api/v1/tasks/{name}` with the version read). One draft, two views: the YAML of a job
 * file (the document `axctl apply` and the import take) and a form of the common fields;
 * switching keeps the edits. The API's refusals are shown at the field (form) or by line (YAML);
 * an edit is saved from a diff against the stored version; a version conflict offers to reload
 * theirs and shows the diff again.
 */
import { useEffect, useRef, useState } from 'react';
import { Link, useLocation, useParams } from 'wouter';
import { errorText, type Page } from '../api';
import { DiffView } from '../authoring/DiffView';
import { bodyOf } from '../authoring/draft-form';
import { byFormField, byYamlLine, issuesOfError, type FieldIssue } from '../authoring/field-errors';
import { DetailedApiError, useSend } from '../authoring/http';
import { TaskForm } from '../authoring/TaskForm';
import { definitionOf, newTaskTeam, newTaskYaml, parseDraftYaml, toYaml, type Draft } from '../authoring/task-yaml';
import type { TaskResource } from '../authoring/types';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { ManagedBy } from '../components/ManagedBy';
import { can } from '../roles';
import { useSession } from '../session';
import { useTeamNames } from '../teams';
import { useApi } from '../use-api';
import '../styles/authoring.css';

type Mode = 'yaml' | 'form';

interface Stored {
  draft: Draft;
  yaml: string;
  version: number;
  managedBy: string | null;
}

function storedOf(resource: TaskResource): Stored {
  const draft = definitionOf(resource);
  return { draft, yaml: toYaml(draft), version: resource.version, managedBy: resource.managedBy };
}

/** The 1-based line `line` of a textarea selected and scrolled to. */
function selectLine(area: HTMLTextAreaElement | null, line: number): void {
  if (area === null) return;
  const lines = area.value.split('\n');
  const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
  area.focus();
  area.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
}

export function TaskEditorPage() {
  const { name } = useParams<{ name?: string }>();
  const editing = name !== undefined;
  const { principal } = useSession();
  const mayWrite = can(principal.role, 'operator');
  const send = useSend();
  const [, navigate] = useLocation();
  const teams = useTeamNames();
  const taskNames = useApi<Page<TaskResource>>('/api/v1/tasks', { limit: 500 });
  const [stored, setStored] = useState<Stored | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [mode, setMode] = useState<Mode>('yaml');
  const [yamlText, setYamlText] = useState(editing ? '' : newTaskYaml(newTaskTeam(principal.teams)));
  const [draft, setDraft] = useState<Draft>({});
  const [issues, setIssues] = useState<FieldIssue[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [conflict, setConflict] = useState<string | null>(null);
  const [review, setReview] = useState(false);
  const [busy, setBusy] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);

  const path = name === undefined ? null : `/api/v1/tasks/${encodeURIComponent(name)}`;
  const load = async (): Promise<Stored | null> => {
    if (path === null) return null;
    try {
      const next = storedOf(await send<TaskResource>('GET', path));
      setStored(next);
      setLoadError(null);
      return next;
    } catch (err) {
      setLoadError(errorText(err));
      return null;
    }
  };

  useEffect(() => {
    if (path === null) return;
    let live = true;
    void send<TaskResource>('GET', path)
      .then((resource) => {
        if (!live) return;
        const next = storedOf(resource);
        setStored(next);
        setYamlText(next.yaml);
        setDraft(next.draft);
      })
      .catch((err: unknown) => {
        if (live) setLoadError(errorText(err));
      });
    return () => {
      live = false;
    };
  }, [path, send]);

  /** The draft as it now is (parsed from the YAML in YAML mode), or null with the problem shown. */
  const current = (): Draft | null => {
    if (mode === 'form') return draft;
    const parsed = parseDraftYaml(yamlText);
    if (parsed.ok) return parsed.value;
    setIssues([{ path: '', message: parsed.line === undefined ? parsed.message : `${parsed.message} (line ${parsed.line})` }]);
    return null;
  };
  const currentYaml = mode === 'yaml' ? yamlText : toYaml(draft);

  const switchTo = (next: Mode) => {
    if (next === mode) return;
    if (next === 'form') {
      const parsed = parseDraftYaml(yamlText);
      if (!parsed.ok) {
        setError(`Fix the YAML first: ${parsed.message}${parsed.line === undefined ? '' : ` (line ${parsed.line})`}`);
        return;
      }
      setDraft(parsed.value);
    } else setYamlText(toYaml(draft));
    setError(null);
    setMode(next);
  };

  const edited = (apply: () => void) => {
    apply();
    setReview(false);
  };

  const refused = (err: unknown) => {
    if (err instanceof DetailedApiError) {
      if (err.status === 409 && err.code === 'VERSION_CONFLICT') {
        setConflict(`${name ?? ''} was changed by someone else since you opened it: reload to see their version (your edits are kept and compared with theirs).`);
        setReview(false);
        return;
      }
      const placed = issuesOfError(err.code, err.message, err.details);
      if (placed.length > 0) {
        setIssues(placed);
        setError(err.code === 'CYCLE' ? err.message : `The API refused the task: ${placed.length} problem${placed.length === 1 ? '' : 's'}, shown ${mode === 'form' ? 'at the fields' : 'under the editor'}.`);
        setReview(false);
        return;
      }
    }
    setError(errorText(err));
  };

  const save = async () => {
    const value = current();
    if (value === null) return;
    setBusy(true);
    setError(null);
    setIssues([]);
    try {
      if (!editing) {
        const created = await send<TaskResource>('POST', '/api/v1/tasks', { body: bodyOf(value, null, null) });
        navigate(`/tasks/${encodeURIComponent(created.name)}`);
        return;
      }
      if (stored === null) return;
      await send<TaskResource>('PUT', path ?? '', { body: bodyOf(value, stored.draft, stored.version) });
      navigate(`/tasks/${encodeURIComponent(name)}`);
    } catch (err) {
      refused(err);
    } finally {
      setBusy(false);
    }
  };

  const reviewChanges = () => {
    setError(null);
    setIssues([]);
    if (current() !== null) setReview(true);
  };

  const reloadTheirs = async () => {
    setBusy(true);
    const next = await load();
    setBusy(false);
    if (next === null) return;
    setConflict(null);
    setReview(true);
  };

  if (editing && stored === null) {
    return (
      <>
        <h2>Edit {name}</h2>
        <ErrorLine error={loadError} />
        {loadError === null && <Loading what="the task" />}
      </>
    );
  }

  const placedForm = byFormField(issues);
  const placedYaml = byYamlLine(currentYaml, issues);
  const otherIssues = mode === 'form' ? placedForm.other : placedYaml;
  return (
    <>
      <hgroup>
        <h2>{editing ? `Edit ${name}` : 'New task'}</h2>
        <p>
          {editing ? (
            <>
              Version {stored?.version} · <Link href={`/tasks/${encodeURIComponent(name)}`}>back to the task</Link>
            </>
          ) : (
            'A task definition as in a YAML job file (docs: job files); the form edits its common fields.'
          )}
        </p>
      </hgroup>
      <ManagedBy source={stored?.managedBy} />
      {!mayWrite && (
        <p className="error-line" role="alert" data-testid="cannot-save">
          Signed in as {principal.role}: you can read here but not save. Creating and editing tasks needs the operator role (the API answers 403).
        </p>
      )}
      <div className="mode-switch" role="tablist" aria-label="Editor view">
        <button type="button" role="tab" aria-selected={mode === 'yaml'} className={mode === 'yaml' ? '' : 'secondary outline'} data-mode="yaml" onClick={() => switchTo('yaml')}>
          YAML
        </button>
        <button type="button" role="tab" aria-selected={mode === 'form'} className={mode === 'form' ? '' : 'secondary outline'} data-mode="form" onClick={() => switchTo('form')}>
          Form
        </button>
      </div>
      {mode === 'yaml' ? (
        <label>
          Task definition (YAML)
          <textarea
            ref={area}
            name="yaml"
            className="yaml-editor"
            spellCheck={false}
            rows={Math.min(40, Math.max(16, yamlText.split('\n').length + 2))}
            value={yamlText}
            readOnly={!mayWrite}
            aria-invalid={issues.length > 0 ? true : undefined}
            onChange={(e) => edited(() => setYamlText(e.target.value))}
          />
        </label>
      ) : (
        <TaskForm
          draft={draft}
          onChange={(next) => edited(() => setDraft(next))}
          errors={placedForm.fields}
          nameLocked={editing}
          readOnly={!mayWrite}
          teams={teams.names ?? []}
          tasks={(taskNames.data?.items ?? []).map((t) => t.name).filter((t) => t !== name)}
        />
      )}
      {otherIssues.length > 0 && (
        <ul className="yaml-issues" data-testid="yaml-issues" role="alert">
          {otherIssues.map((issue, i) => {
            const line = 'line' in issue ? (issue as { line?: number }).line : undefined;
            return (
              <li key={i} data-issue-path={issue.path} data-issue-line={line}>
                {line !== undefined ? (
                  <button type="button" className="secondary outline small line-ref" onClick={() => selectLine(area.current, line)}>
                    line {line}
                  </button>
                ) : (
                  issue.path !== '' && <span className="line-ref">{issue.path}</span>
                )}
                {issue.message}
                {mode === 'form' && ' (edit it in the YAML view)'}
              </li>
            );
          })}
        </ul>
      )}
      <ErrorLine error={error} />
      {conflict !== null && (
        <div className="conflict" data-testid="version-conflict" role="alert">
          <p className="error-line">{conflict}</p>
          <button type="button" className="secondary" data-action="reload-theirs" disabled={busy} onClick={() => void reloadTheirs()}>
            Reload their version and show the diff
          </button>
        </div>
      )}
      {review && stored !== null && (
        <section data-testid="review">
          <h3>Changes against version {stored.version}</h3>
          <DiffView before={stored.yaml} after={currentYaml} />
        </section>
      )}
      <div className="editor-actions">
        {!editing && (
          <button type="button" data-action="create" disabled={!mayWrite || busy} aria-busy={busy} onClick={() => void save()}>
            Create task
          </button>
        )}
        {editing && !review && (
          <button type="button" data-action="review" disabled={!mayWrite || busy} onClick={reviewChanges}>
            Review changes
          </button>
        )}
        {editing && review && (
          <button type="button" data-action="save" disabled={!mayWrite || busy || stored === null || stored.yaml === currentYaml} aria-busy={busy} onClick={() => void save()}>
            Save
          </button>
        )}
        <Link href={editing ? `/tasks/${encodeURIComponent(name)}` : '/tasks'} className="secondary">
          Cancel
        </Link>
      </div>
    </>
  );
}
