/** One line for a refused admin write: the API's message and the fields its 400 names. */
import { errorText } from '../api';
import { issuesOfError } from '../authoring/field-errors';
import { DetailedApiError } from '../authoring/http';

export function failureText(err: unknown): string {
  if (!(err instanceof DetailedApiError)) return errorText(err);
  const issues = issuesOfError(err.code, '', err.details).map((i) => (i.path === '' || i.message.startsWith(i.path) ? i.message : `${i.path}: ${i.message}`));
  return issues.length === 0 ? err.message : `${err.message}: ${issues.join(' · ')}`;
}
