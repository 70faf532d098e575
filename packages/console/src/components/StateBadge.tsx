/** An instance state as a coloured label (colours in styles.css, shared with the DAG view). */
export function StateBadge({ state }: { state: string }) {
  return (
    <span className={`state state-${state}`} data-state={state}>
      {state}
    </span>
  );
}
