/**
 * The state of each DAG task on the latest business date any of them has an instance for
 * (what the DAG view colours by). Two rounds of small requests, at most 8 at a time.
 */
import type { ApiClient, Page } from './api';
import type { Instance } from './types';

async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  });
  await Promise.all(lanes);
  return results;
}

/** The newest instance of `task` (on `bizDate` when given), or null. */
async function newest(client: ApiClient, task: string, bizDate?: string): Promise<Instance | null> {
  const page = await client.get<Page<Instance>>('/api/v1/instances', { task, bizDate, limit: 1 });
  return page.items[0] ?? null;
}

/** The latest business date among the tasks' newest instances, or null when none ran. */
export async function latestBizDate(client: ApiClient, tasks: readonly string[]): Promise<string | null> {
  const latest = await mapLimited(tasks, 8, (t) => newest(client, t));
  return latest.reduce<string | null>((max, i) => (i !== null && (max === null || i.bizDate > max) ? i.bizDate : max), null);
}

/** Each task's newest instance on `bizDate`. */
export async function instancesOn(client: ApiClient, tasks: readonly string[], bizDate: string): Promise<Map<string, Instance>> {
  const found = await mapLimited(tasks, 8, (t) => newest(client, t, bizDate));
  const byTask = new Map<string, Instance>();
  found.forEach((i) => {
    if (i !== null) byTask.set(i.taskName, i);
  });
  return byTask;
}
