/**
 * One instance: its state (followed every 2 s until final), its executions (one per attempt or
 * dispatch), each attempt's log (live while it runs), the event timeline, and the output tail of
 * the latest execution. Operators may
 * cancel it while it is not final and re-run it once it is (dry-run preview first).
 */
import { useEffect, useState, type ReactNode } from 'react';
import { Link, useParams } from 'wouter';
import { errorText } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { InstanceLogs } from '../components/InstanceLogs';
import { Loading } from '../components/Loading';
import { Notice } from '../components/Notice';
import { batchHref, RerunDialog } from '../components/RerunDialog';
import { useStatus } from '../components/PauseBanner';
import { StateBadge } from '../components/StateBadge';
import { traceUrl } from '../trace-link';
import { WAITING_HINTS } from '../waiting';
import { between, duration, utc, utcTimeMs } from '../format';
import { can } from '../roles';
import { useSession } from '../session';
import { useApi } from '../use-api';
import { FINAL_STATES, type InstanceDetail, type InstanceEvent } from '../types';

const isFinal = (state: string): boolean => (FINAL_STATES as readonly string[]).includes(state);

function Timeline({ events }: { events: readonly InstanceEvent[] }) {
  if (events.length === 0) return <p>No events.</p>;
  return (
    <ol className="timeline" data-testid="events">
      {events.map((e, index) => (
        <li key={`${e.at}-${index}`} data-event={e.type}>
          <time dateTime={e.at} title={utc(e.at)}>
            {utcTimeMs(e.at)}
          </time> <strong>{e.type}</strong>
          {e.workerId !== undefined && <small className="muted"> on {e.workerId}</small>}
          {e.message !== undefined && <span> — {e.message}</span>}
          {e.data !== undefined && Object.keys(e.data).length > 0 && (
            <details>
              <summary>data</summary>
              <pre className="output">{JSON.stringify(e.data, null, 2)}</pre>
            </details>
          )}
        </li>
      ))}
    </ol>
  );
}

/**
 * What a job answered (an HTTP executor's `data`, an async `/report`'s `{success, message, data}`,
 * a plugin's return), in one line, cut at 200 characters: the full value is in the API's answer.
 */
export function resultText(result: unknown): string {
  if (result === null || result === undefined) return '';
  const text = typeof result === 'string' ? result : JSON.stringify(result);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

export function InstanceDetailPage() {
  const { id = '' } = useParams<{ id: string }>();
  const { client, principal } = useSession();
  const [final, setFinal] = useState(false);
  const detail = useApi<InstanceDetail>(`/api/v1/instances/${encodeURIComponent(id)}`, {}, { refreshMs: final ? 0 : 2_000 });
  const traceTemplate = useStatus().data?.traceUrlTemplate ?? null;
  const [error, setError] = useState<string | null>(null);
  const [rerun, setRerun] = useState(false);
  const [rerunDone, setRerunDone] = useState<{ ids: string[]; batchId: string | null } | null>(null);
  const operator = can(principal.role, 'operator');
  const i = detail.data;

  // Polling stops once the instance is final; a rerun (reload → not final) starts it again.
  const state = i?.state;
  useEffect(() => setFinal(state !== undefined && isFinal(state)), [state]);

  if (i === undefined) {
    return (
      <>
        <h2>Instance #{id}</h2>
        <ErrorLine error={detail.error} />
        {detail.error === null && <Loading what="the instance" />}
      </>
    );
  }

  const cancel = async () => {
    if (!window.confirm(`Cancel instance #${i.id} of ${i.taskName}? A running job is killed on its worker.`)) return;
    try {
      await client.post(`/api/v1/instances/${i.id}/cancel`, {});
      setError(null);
      detail.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const traceLink = traceUrl(traceTemplate, i.traceId);
  const facts: Array<[string, ReactNode]> = [
    ['task', <Link href={`/tasks/${encodeURIComponent(i.taskName)}`}>{i.taskName}</Link>],
    ['team', i.team ?? '—'],
    ['slot', utc(i.expectedTime)],
    ['biz date', i.bizDate],
    ['trigger', `${i.trigger} (run ${i.runNo})`],
    // The task version its latest dispatch sent (#47); the task page diffs versions.
    ['task version', i.taskVersion == null ? '—' : String(i.taskVersion)],
    // The run's trace id (#48): in every log line of the run, linked to the tracing UI when set.
    [
      'trace',
      i.traceId == null ? (
        '—'
      ) : traceLink === null ? (
        <code data-testid="instance-trace">{i.traceId}</code>
      ) : (
        <a href={traceLink} target="_blank" rel="noreferrer" data-testid="instance-trace">
          <code>{i.traceId}</code>
        </a>
      ),
    ],
    ['attempt', `${i.attempt} of ${i.maxAttempts}`],
    ['worker', i.workerId ?? '—'],
    ['started', utc(i.startedAt)],
    ['ended', utc(i.endedAt)],
    ['duration', duration(between(i.startedAt, i.endedAt))],
    ['reason', i.reason ?? '—'],
    // Why a due instance is not dispatched (#45); the hint says what to do about it.
    [
      'waiting',
      i.waiting == null ? (
        '—'
      ) : (
        <span data-testid="instance-waiting">
          <strong>{i.waiting.reason}</strong> since {utc(i.waiting.since)}: {i.waiting.message}
          <small className="muted block">{WAITING_HINTS[i.waiting.reason]}</small>
        </span>
      ),
    ],
  ];

  return (
    <>
      <hgroup>
        <h2>
          Instance #{i.id} <StateBadge state={i.state} />
        </h2>
        <p>
          {i.taskName} · {i.bizDate}
          {!isFinal(i.state) && <span aria-busy="true"> following…</span>}
        </p>
      </hgroup>
      {operator && (
        <div className="actions">
          {!isFinal(i.state) && (
            <button type="button" className="secondary" data-action="cancel" onClick={() => void cancel()}>
              Cancel
            </button>
          )}
          {isFinal(i.state) && (
            <button type="button" data-action="rerun" onClick={() => setRerun(true)}>
              Rerun…
            </button>
          )}
        </div>
      )}
      {rerunDone !== null && (
        <Notice onClose={() => setRerunDone(null)}>
          Rerun requested{rerunDone.batchId !== null && (
            <>
              {' '}(<Link href={batchHref(rerunDone.batchId)}>batch #{rerunDone.batchId}</Link>)
            </>
          )}:{' '}
          {rerunDone.ids.map((rid, n) => (
            <span key={rid}>
              {n > 0 && ', '}
              <Link href={`/instances/${rid}`}>#{rid}</Link>
            </span>
          ))}
        </Notice>
      )}
      <ErrorLine error={error ?? detail.error} />
      <table className="definition" data-testid="instance-facts">
        <tbody>
          {facts.map(([k, v]) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <section>
        <h3>Executions</h3>
        {i.executions.length === 0 ? (
          <p>Not dispatched yet.</p>
        ) : (
          <div className="table-scroll">
            <table className="striped" data-testid="executions">
              <thead>
                <tr>
                  <th>run</th>
                  <th>attempt</th>
                  <th>execution</th>
                  <th>worker</th>
                  <th>state</th>
                  <th>dispatched</th>
                  <th>duration</th>
                  <th>exit</th>
                  <th>error</th>
                  <th>result</th>
                </tr>
              </thead>
              <tbody>
                {i.executions.map((e) => (
                  <tr key={e.executionId} data-execution={e.executionId}>
                    <td data-column="run">{e.runNo}</td>
                    <td data-column="attempt">
                      {e.attempt}
                      {e.shardTotal !== null && e.shardTotal > 1 && <small className="muted"> shard {(e.shardIndex ?? 0) + 1}/{e.shardTotal}</small>}
                    </td>
                    <td>
                      <code>{e.executionId}</code>
                    </td>
                    <td>{e.workerId ?? '—'}</td>
                    <td>
                      <StateBadge state={e.state} />
                      {e.reason !== null && <small className="muted block">{e.reason}</small>}
                    </td>
                    <td>{utc(e.dispatchedAt)}</td>
                    <td>{duration(between(e.startedAt, e.endedAt))}</td>
                    <td>{e.exitCode ?? '—'}</td>
                    <td>{e.error ?? ''}</td>
                    <td data-column="result">{resultText(e.result)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section data-testid="instance-log">
        <h3>Log</h3>
        <InstanceLogs executions={i.executions} />
      </section>
      <div className="grid-2">
        <section>
          <h3>Events <small className="muted">(UTC)</small></h3>
          <Timeline events={i.events} />
        </section>
        <section>
          <h3>Output tail</h3>
          {i.outputTail === null || i.outputTail === '' ? (
            <p>No output.</p>
          ) : (
            <>
              {i.executions[i.executions.length - 1]?.outputTruncated === true && <small className="muted">(truncated: the last 64 KiB)</small>}
              <pre className="output" data-testid="output-tail">
                {i.outputTail}
              </pre>
            </>
          )}
        </section>
      </div>
      {rerun && (
        <RerunDialog
          target={{ mode: 'instance', instanceId: i.id, taskName: i.taskName, bizDate: i.bizDate }}
          onClose={() => setRerun(false)}
          onDone={(ids, batchId) => {
            setRerun(false);
            setRerunDone({ ids, batchId });
            detail.reload();
          }}
        />
      )}
    </>
  );
}
