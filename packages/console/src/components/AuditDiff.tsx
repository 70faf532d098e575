/** The change an audit entry records, field by field: path, old → new (audit-diff.ts). */
import { auditChanges } from '../audit-diff';

export function AuditDiff({ before, after }: { before: unknown; after: unknown }) {
  const changes = auditChanges(before, after);
  if (changes.length === 0) return <span className="muted">no field changed{before !== undefined && after !== undefined ? ' (secret values are masked)' : ''}</span>;
  return (
    <table className="audit-diff" data-testid="audit-diff">
      <tbody>
        {changes.map((c) => (
          <tr key={c.path} data-path={c.path} data-kind={c.kind}>
            <th scope="row">
              <code>{c.path}</code>
            </th>
            <td>
              {c.from !== undefined && <del className="audit-from">{c.from}</del>}
              {c.kind === 'changed' && <span aria-hidden="true"> → </span>}
              {c.to !== undefined && <ins className="audit-to">{c.to}</ins>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
