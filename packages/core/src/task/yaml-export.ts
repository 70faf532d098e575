/**
 * Task definitions back to a YAML job file (`axctl tasks get -o yaml`, `tasks list -o yaml`):
 * one `---` document per task, the definition fields only, in the contract's order, so the
 * file can be applied again as it is.
 */
import { stringify } from 'yaml';
import { TASK_DEFINITION_FIELDS } from './definition.js';

/** The definition fields of a task resource, in {@link TASK_DEFINITION_FIELDS} order (resource fields dropped). */
export function definitionOf(resource: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of TASK_DEFINITION_FIELDS) {
    if (resource[field] !== undefined) out[field] = resource[field];
  }
  return out;
}

/** YAML documents (`---` between them) of the definitions of `resources`. */
export function formatTaskYaml(resources: ReadonlyArray<Readonly<Record<string, unknown>>>): string {
  return resources.map((r) => stringify(definitionOf(r), { lineWidth: 0 })).join('---\n');
}
