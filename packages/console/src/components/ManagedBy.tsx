/**
 * The marker of the import that manages a task (`managedBy`, set by `axctl apply --source`): the
 * source of truth is that repository, so a change made in the console lasts only until its next apply
 * (and `--prune` there may delete the task). Nothing when no import manages the task.
 */
export function ManagedBy({ source }: { source: string | null | undefined }) {
  if (source == null) return null;
  return (
    <p className="managed-by" role="note" data-testid="managed-by" data-source={source}>
      Managed by <code>{source}</code> — edits here will be overwritten by the next <code>axctl apply --source {source}</code>; change it in that source instead.
    </p>
  );
}
