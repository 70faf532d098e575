/**
 * Resources of the operations pages (#20): alerts, dead letters, the DAG grid (docs/admin-api.md
 * "Extensions"), from @ax/api-types (generated from the OpenAPI document: not written here).
 */
import type * as Api from '@ax/api-types';

/** One alert of `GET /api/v1/alerts`. */
export type Alert = Api.Alert;

/** How far an alert's webhook delivery got. */
export type AlertDelivery = Alert['delivery'];

/** One dead letter of `GET /api/v1/dead-letters` (a message RabbitMQ could not deliver or a consumer refused). */
export type DeadLetter = Api.DeadLetter;

/** One cell of `GET /api/v1/dag/grid`: the latest slot of a task on a business date. */
export type GridCell = Api.DagGridCell;

/** `GET /api/v1/dag/grid`. */
export type DagGrid = Api.DagGrid;

/** What `POST /api/v1/reruns` answers when it ran (not a dry run). */
export type RerunStarted = Api.RerunStarted;
