/**
 * Dead letters (`GET /api/v1/dead-letters`, operators with a token of every team): messages the
 * broker could not process, newest first — the queue they came from, why, when and a preview of
 * the message. A lower role is told so and the API is not asked (it would answer 403).
 */
import { useState } from 'react';
import type { Page } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { UtcLocal } from '../ops/TimeCell';
import type { DeadLetter } from '../ops/types';
import { can } from '../roles';
import { useSession } from '../session';
import { useApi } from '../use-api';
import { Pager, usePager } from '../components/Pager';
import '../styles/ops.css';

/** Characters of a message shown before "show all". */
const PREVIEW_CHARS = 160;

function Payload({ letter }: { letter: DeadLetter }) {
  const [open, setOpen] = useState(false);
  if (letter.payload === null) return <span className="muted">(not kept)</span>;
  const long = letter.payload.length > PREVIEW_CHARS;
  return (
    <>
      <code className="payload" data-testid="dead-letter-payload">
        {open || !long ? letter.payload : `${letter.payload.slice(0, PREVIEW_CHARS)}…`}
      </code>
      {long && (
        <button type="button" className="secondary outline small" onClick={() => setOpen((o) => !o)}>
          {open ? 'less' : `all ${letter.payload.length} characters`}
        </button>
      )}
    </>
  );
}

export function DeadLettersPage() {
  const { principal } = useSession();
  const operator = can(principal.role, 'operator');
  const pager = usePager();
  const list = useApi<Page<DeadLetter>>(operator ? '/api/v1/dead-letters' : null, { limit: 50, cursor: pager.cursor }, { refreshMs: 15_000 });

  if (!operator) {
    return (
      <>
        <h2>Dead letters</h2>
        <p className="notice" data-testid="needs-operator">
          Dead letters need the operator role (and a token of every team); this token has the {principal.role} role.
        </p>
      </>
    );
  }

  return (
    <>
      <hgroup>
        <h2>Dead letters</h2>
        <p>Messages the broker could not process, newest first. They are kept for inspection; nothing re-sends them.</p>
      </hgroup>
      <ErrorLine error={list.error} />
      {list.data === undefined ? (
        list.error === null && <Loading what="dead letters" />
      ) : list.data.items.length === 0 ? (
        <p data-testid="dead-letters-empty">No dead letters.</p>
      ) : (
        <div className="table-scroll">
          <table className="striped" data-testid="dead-letter-table">
            <thead>
              <tr>
                <th>at</th>
                <th>source queue</th>
                <th>reason</th>
                <th>message</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((d) => (
                <tr key={d.id} data-dead-letter={d.id}>
                  <td>
                    <UtcLocal iso={d.at} />
                  </td>
                  <td>
                    <code>{d.sourceQueue}</code>
                  </td>
                  <td>{d.reason}</td>
                  <td className="message">
                    <Payload letter={d} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pager={pager} nextCursor={list.data?.nextCursor} />
    </>
  );
}
