/** Shapes the authoring pages read, from @ax/api-types (generated from the OpenAPI document). */
import type { DagGraph, Task, TaskListItem } from '@ax/api-types';

/**
 * A task resource as `GET /api/v1/tasks/{name}` answers it (with `dependsOn`), or an item of
 * `GET /api/v1/tasks`, which adds `lastRun`.
 */
export type TaskResource = Task & Partial<Pick<TaskListItem, 'lastRun'>>;

/** A parent in a task resource's `dependsOn`. */
export type DependsOn = NonNullable<Task['dependsOn']>[number];

/** The latest instance of a task (`lastRun` of `GET /api/v1/tasks` items). */
export type LastRun = NonNullable<TaskListItem['lastRun']>;

/** `GET /api/v1/dag`. */
export type Dag = DagGraph;
