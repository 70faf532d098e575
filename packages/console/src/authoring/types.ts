/** Shapes the authoring pages read that `types.ts` does not (yet) declare. */
import type { Task } from '../types';

/** A parent in a task resource's `dependsOn`. */
export interface DependsOn {
  task: string;
  rule: 'ALL_SUCCESS' | 'ALL_DONE';
}

/** The latest instance of a task (`lastRun` of `GET /api/v1/tasks` items). */
export interface LastRun {
  instanceId: string;
  state: string;
  endedAt: string | null;
}

/** A task resource with the extensions the authoring pages use. */
export type TaskResource = Task & { dependsOn?: DependsOn[]; lastRun?: LastRun | null };

/** `GET /api/v1/dag`. */
export interface Dag {
  nodes: string[];
  edges: Array<{ parent: string; child: string; rule: string }>;
}
