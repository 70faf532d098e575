/** Task actions shared by the task list and the task detail page. */
import type { ApiClient } from './api';
import type { Instance, Task } from './types';

/** "Run now": `POST /tasks/{name}/trigger`; the instance it created. */
export function runNow(client: ApiClient, name: string): Promise<Instance> {
  return client.post<Instance>(`/api/v1/tasks/${encodeURIComponent(name)}/trigger`, {});
}

/** Switches scheduling on or off; the task as it now is. */
export function setEnabled(client: ApiClient, name: string, enabled: boolean): Promise<Task> {
  return client.post<Task>(`/api/v1/tasks/${encodeURIComponent(name)}/${enabled ? 'enable' : 'disable'}`, {});
}
