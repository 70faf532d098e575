/**
 * The trigger dialog ("Run now…", operators): params as JSON (must parse, must be an object),
 * an optional business date and `Idempotency-Key`, then a confirmation that names what will run;
 * `POST /api/v1/tasks/{name}/trigger` and on to the instance it created.
 */
import { useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import { errorText } from '../api';
import { useSend } from '../authoring/http';
import { checkIdempotencyKey, checkParams, confirmationText } from '../authoring/trigger-input';
import type { Instance } from '../types';
import { ErrorLine } from './ErrorLine';
import '../styles/authoring.css';

interface Checked {
  params: Record<string, unknown>;
  bizDate: string;
  key: string;
}

export function TriggerDialog({ task, team, onClose }: { task: string; team: string; onClose: () => void }) {
  const send = useSend();
  const [, navigate] = useLocation();
  const [paramsText, setParamsText] = useState('{}');
  const [bizDate, setBizDate] = useState('');
  const [key, setKey] = useState('');
  const [paramsError, setParamsError] = useState<string | null>(null);
  const [keyError, setKeyError] = useState<string | null>(null);
  const [checked, setChecked] = useState<Checked | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const edit = (apply: () => void) => {
    apply();
    setChecked(null);
    setError(null);
  };

  const review = (e: FormEvent) => {
    e.preventDefault();
    const params = checkParams(paramsText);
    const badKey = checkIdempotencyKey(key.trim());
    setParamsError(params.ok ? null : params.message);
    setKeyError(badKey);
    if (!params.ok || badKey !== null) return;
    setChecked({ params: params.value, bizDate, key: key.trim() });
  };

  const run = async () => {
    if (checked === null) return;
    setBusy(true);
    setError(null);
    try {
      const body: Record<string, unknown> = { params: checked.params };
      if (checked.bizDate !== '') body['bizDate'] = checked.bizDate;
      const instance = await send<Instance>('POST', `/api/v1/tasks/${encodeURIComponent(task)}/trigger`, {
        body,
        ...(checked.key === '' ? {} : { headers: { 'Idempotency-Key': checked.key } }),
      });
      navigate(`/instances/${instance.id}`);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };

  return (
    <dialog
      open
      aria-labelledby="trigger-title"
      data-testid="trigger-dialog"
      onKeyDown={(e) => {
        if (e.key === 'Escape') onClose();
      }}
    >
      <article>
        <header>
          <button type="button" aria-label="Close" rel="prev" onClick={onClose} />
          <h3 id="trigger-title">Run {task} now</h3>
        </header>
        <form onSubmit={review}>
          <label>
            Params (JSON object)
            <textarea
              name="params"
              rows={4}
              className="code-input"
              spellCheck={false}
              value={paramsText}
              aria-invalid={paramsError === null ? undefined : true}
              aria-describedby="trigger-params-error"
              onChange={(e) => edit(() => setParamsText(e.target.value))}
            />
            {paramsError !== null && (
              <small id="trigger-params-error" className="field-error" data-field-error="params">
                {paramsError}
              </small>
            )}
          </label>
          <div className="grid-2 tight">
            <label>
              Business date (optional)
              <input type="date" name="bizDate" value={bizDate} onChange={(e) => edit(() => setBizDate(e.target.value))} />
              <small className="muted">Empty: the date of the slot the trigger makes, in the task&apos;s zone.</small>
            </label>
            <label>
              Idempotency key (optional)
              <input
                name="idempotencyKey"
                value={key}
                maxLength={255}
                placeholder="e.g. backfix-2026-12-01"
                aria-invalid={keyError === null ? undefined : true}
                onChange={(e) => edit(() => setKey(e.target.value))}
              />
              {keyError !== null ? (
                <small className="field-error" data-field-error="idempotencyKey">
                  {keyError}
                </small>
              ) : (
                <small className="muted">Sent as Idempotency-Key: the same key within 24 h returns the same instance.</small>
              )}
            </label>
          </div>
          <button type="submit" className="secondary">
            Review
          </button>
        </form>
        {checked !== null && (
          <p className="confirm-line" data-testid="trigger-confirmation">
            {confirmationText(task, team, checked.params, checked.bizDate, checked.key)}
          </p>
        )}
        <ErrorLine error={error} />
        <footer>
          <button type="button" className="secondary outline" onClick={onClose}>
            Cancel
          </button>
          <button type="button" data-action="confirm-run" disabled={checked === null || busy} aria-busy={busy} onClick={() => void run()}>
            Run now
          </button>
        </footer>
      </article>
    </dialog>
  );
}
