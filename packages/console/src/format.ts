/** Times and durations for people. The API speaks UTC; a task's own zone is shown next to it. */

const UTC_FORMAT = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

const UTC_MS_FORMAT = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  fractionalSecondDigits: 3,
  hourCycle: 'h23',
});

/** `21:08:54.123` (UTC): events of one run are milliseconds apart. */
export function utcTimeMs(iso: string | null | undefined): string {
  if (iso == null) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : UTC_MS_FORMAT.format(date);
}

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

function zoneFormat(zone: string): Intl.DateTimeFormat {
  let format = zoneFormats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    });
    zoneFormats.set(zone, format);
  }
  return format;
}

function isoLike(format: Intl.DateTimeFormat, date: Date): string {
  const parts = Object.fromEntries(format.formatToParts(date).map((p) => [p.type, p.value]));
  const base = `${parts['year']}-${parts['month']}-${parts['day']} ${parts['hour']}:${parts['minute']}:${parts['second']}`;
  return parts['timeZoneName'] === undefined ? base : `${base} ${parts['timeZoneName']}`;
}

/** `2026-12-01 02:00:00 UTC`, or `—` for null. */
export function utc(iso: string | null | undefined): string {
  if (iso == null) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${isoLike(UTC_FORMAT, date)} UTC`;
}

/** The instant in an IANA zone, e.g. `2026-12-01 10:00:00 GMT+8`; falls back to UTC for an unknown zone. */
export function inZone(iso: string | null | undefined, zone: string): string {
  if (iso == null) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  try {
    return isoLike(zoneFormat(zone), date);
  } catch (_unknownZone) {
    return utc(iso);
  }
}

/** `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 03 min`; `—` for null. */
export function duration(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** Milliseconds between two ISO instants, or null. */
export function between(from: string | null | undefined, to: string | null | undefined): number | null {
  if (from == null || to == null) return null;
  return new Date(to).getTime() - new Date(from).getTime();
}

/** `12 s ago` style age of an instant. */
export function age(iso: string | null | undefined, now = Date.now()): string {
  if (iso == null) return '—';
  const ms = now - new Date(iso).getTime();
  return ms < 0 ? 'just now' : `${duration(ms)} ago`;
}

/** A task's schedule in one line. */
export function scheduleText(s: { type: string; expr?: string; everySeconds?: number; at?: string; timezone?: string }): string {
  const zone = s.timezone !== undefined && s.timezone !== 'UTC' ? ` (${s.timezone})` : '';
  switch (s.type) {
    case 'cron':
      return `cron ${s.expr ?? '?'}${zone}`;
    case 'fixed_rate':
      return `every ${s.everySeconds ?? '?'} s`;
    case 'once':
      return `once at ${utc(s.at ?? null)}`;
    case 'none':
      return 'manual / dependency only';
    default:
      return s.type;
  }
}

const localFormats = new Map<string, Intl.DateTimeFormat>();

function localFormat(zone: string | undefined): Intl.DateTimeFormat {
  const key = zone ?? '';
  let format = localFormats.get(key);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-GB', {
      ...(zone === undefined ? {} : { timeZone: zone }),
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    localFormats.set(key, format);
  }
  return format;
}

/**
 * The instant in the browser's own zone (or `zone`), short: `18:00 local`, or
 * `12-02 02:00 local` when the local day differs from the UTC day; `—` for null.
 */
export function localTime(iso: string | null | undefined, zone?: string): string {
  if (iso == null) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const parts = Object.fromEntries(localFormat(zone).formatToParts(date).map((p) => [p.type, p.value]));
  const sameDay = `${parts['year']}-${parts['month']}-${parts['day']}` === date.toISOString().slice(0, 10);
  return `${sameDay ? '' : `${parts['month']}-${parts['day']} `}${parts['hour']}:${parts['minute']} local`;
}

/** `2026-12-01 10:00:00 UTC · 18:00 local` (browser time beside UTC); `—` for null. */
export function utcAndLocal(iso: string | null | undefined, zone?: string): string {
  if (iso == null) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${utc(iso)} · ${localTime(iso, zone)}`;
}
