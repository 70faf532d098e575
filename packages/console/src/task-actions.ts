/** Task actions shared by the task list and the task detail page. */
import type { ApiClient } from './api';
import type { Task } from './types';

/** Switches scheduling on or off, with an optional reason for the audit; the task as it now is. */
export function setEnabled(client: ApiClient, name: string, enabled: boolean, reason = ''): Promise<Task> {
  return client.post<Task>(`/api/v1/tasks/${encodeURIComponent(name)}/${enabled ? 'enable' : 'disable'}`, reason.trim() === '' ? {} : { reason: reason.trim() });
}

/**
 * Asks before switching (issue #47: the switch acted on one click, with no reason): the answer is
 * the reason ('' for none), or null when the operator cancels.
 */
export function askSwitch(name: string, enabled: boolean): string | null {
  return window.prompt(`${enabled ? 'Enable' : 'Disable'} ${name}? ${enabled ? 'Its schedule fires again from now on.' : 'It fires nothing until enabled again.'} Why? (optional; kept in the audit)`, '');
}
