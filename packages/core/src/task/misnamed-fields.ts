/**
 * Field names people bring from other schedulers (XXL-JOB, Airflow, cron files, BullMQ) that no
 * edit distance leads to ax's own (issue #47): `retries` is 2 edits from `retry` but means its
 * `max`; `timeout` is far from `timeoutSeconds`; `tz` lives under `schedule`. Keyed by the path of
 * the object holding the field (`''` = the task itself); the value is the field to use, written
 * as a path from the task when it lives elsewhere.
 */
const MISNAMED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  '': {
    retries: 'retry.max',
    retry_count: 'retry.max',
    maxRetries: 'retry.max',
    max_retries: 'retry.max',
    attempts: 'retry.max',
    timeout: 'timeoutSeconds',
    timeout_s: 'timeoutSeconds',
    timeoutSecs: 'timeoutSeconds',
    execution_timeout: 'timeoutSeconds',
    tz: 'schedule.timezone',
    timezone: 'schedule.timezone',
    cron: 'schedule.expr',
    command: 'exec.command',
    url: 'exec.url',
    depends_on: 'dependsOn',
    upstream: 'dependsOn',
  },
  schedule: { tz: 'timezone', cron: 'expr', expression: 'expr' },
  retry: { retries: 'max', count: 'max', maxRetries: 'max', backoff: 'backoffSeconds', delay: 'backoffSeconds' },
};

/** The field to suggest for `key` in the object at `path` of a task definition, if it is a known misname. */
export function misnamedTaskField(path: readonly PropertyKey[], key: string): string | undefined {
  return MISNAMED[path.map(String).join('.')]?.[key];
}
