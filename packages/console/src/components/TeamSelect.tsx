/** A select of the token's teams (`""` = every team the token covers), for the list filters. */
import { useTeamNames } from '../teams';

export function TeamSelect({ value, onChange }: { value: string; onChange: (team: string) => void }) {
  const { names } = useTeamNames();
  // A team in the URL that the list does not (yet) hold stays selectable, so the filter shown is the one applied.
  const options = names === undefined ? (value === '' ? [] : [value]) : names.includes(value) || value === '' ? names : [...names, value];
  return (
    <select name="team" aria-label="Team" data-testid="team-filter" value={value} onChange={(e) => onChange(e.target.value)}>
      <option value="">all my teams</option>
      {options.map((name) => (
        <option key={name} value={name}>
          {name}
        </option>
      ))}
    </select>
  );
}
