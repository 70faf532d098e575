/** An instant as UTC with the browser's local time on a second line (`… UTC` / `· 18:00 local`). */
import { localTime, utc } from '../format';

export function UtcLocal({ iso }: { iso: string | null }) {
  if (iso === null) return <>—</>;
  return (
    <>
      <span className="nowrap">{utc(iso)}</span>
      <small className="muted block nowrap">· {localTime(iso)}</small>
    </>
  );
}
