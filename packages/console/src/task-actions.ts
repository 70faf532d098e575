/** Task actions shared by the task list and the task detail page. */
import type { ApiClient } from './api';
import type { Task } from './types';

/** Switches scheduling on or off; the task as it now is. */
export function setEnabled(client: ApiClient, name: string, enabled: boolean): Promise<Task> {
  return client.post<Task>(`/api/v1/tasks/${encodeURIComponent(name)}/${enabled ? 'enable' : 'disable'}`, {});
}
