/** The trigger dialog's checks and its confirmation sentence (pure, tested). */

export type ParamsCheck = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/** Params typed as JSON: must parse and be an object (empty text = no params). */
export function checkParams(text: string): ParamsCheck {
  if (text.trim() === '') return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `params: not JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, message: `params: must be a JSON object like {"source": "orders"}, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}` };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** An `Idempotency-Key` as the API takes it: 1 to 255 visible ASCII characters (empty = none). */
export function checkIdempotencyKey(text: string): string | null {
  if (text === '') return null;
  return /^[\x21-\x7e]{1,255}$/.test(text) ? null : 'Idempotency-Key: 1 to 255 visible ASCII characters (no spaces)';
}

/** "Run daily_report now on team data with 2 params, biz date 2026-12-01". */
export function confirmationText(task: string, team: string, params: Record<string, unknown>, bizDate: string, idempotencyKey: string): string {
  const count = Object.keys(params).length;
  const withParams = count === 0 ? 'with no params' : `with ${count} param${count === 1 ? '' : 's'}`;
  const date = bizDate === '' ? "biz date of today's slot in the task's zone" : `biz date ${bizDate}`;
  const key = idempotencyKey === '' ? '' : ` (Idempotency-Key ${idempotencyKey}: a repeat within 24 h returns the same instance)`;
  return `Run ${task} now on team ${team} ${withParams}, ${date}${key}`;
}
