/** Checkboxes of the teams a token or an enrollment may be made for (forms.ts `teamChoices`). */
import { teamsLabel, toggleTeam } from './forms';

export function TeamsPicker({ choices, value, onChange }: { choices: readonly string[]; value: readonly string[]; onChange: (teams: string[]) => void }) {
  return (
    <fieldset data-testid="teams-picker">
      <legend>Teams</legend>
      {choices.map((team) => (
        <label key={team}>
          <input type="checkbox" name="teams" value={team} checked={value.includes(team)} onChange={(e) => onChange(toggleTeam(value, team, e.target.checked))} />
          {team === '*' ? teamsLabel(['*']) : team}
        </label>
      ))}
    </fieldset>
  );
}
