/** Pico's busy indicator while the first answer is on its way. */
export function Loading({ what }: { what: string }) {
  return <p aria-busy="true">Loading {what}…</p>;
}
