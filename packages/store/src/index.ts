/**
 * @ax/store: the MySQL layer of ax. A mysql2 pool that is UTC on every connection, a
 * transaction helper, JSON column codecs, the migration runner and the schema-version guard
 * (R22). Named queries per table live in their own modules as the services add them.
 */
export { createPool, withTransaction, CONNECTION_CHARSET } from './pool.js';
export type { CreatePoolOptions, StorePool, IsolationLevel, TransactionOptions } from './pool.js';

export { decodeJson, decodeJsonNullable, encodeJson, encodeJsonNullable } from './json.js';
export type { JsonParser } from './json.js';

export {
  DEFAULT_MIGRATIONS_DIR,
  ensureDatabase,
  loadMigrations,
  migrate,
  migrateDatabase,
  migrationChecksum,
  migrationStatus,
  readAppliedMigrations,
} from './migrate.js';
export type {
  AppliedMigration,
  MigrateDatabaseOptions,
  MigrateOptions,
  MigrateResult,
  MigrationFile,
  MigrationStatus,
} from './migrate.js';
export { splitSqlStatements } from './sql-split.js';

export {
  SCHEMA_VERSION_MAX,
  SCHEMA_VERSION_MIN,
  assertSchemaSupported,
  readSchemaVersion,
} from './schema-version.js';
export type { Queryable, SchemaVersionRange } from './schema-version.js';

export { assertDatabaseName, parseMysqlUrl, redactMysqlUrl, withDatabase } from './url.js';
export type { MysqlUrl } from './url.js';

export {
  InvalidDatabaseUrlError,
  JsonDecodeError,
  TransactionTimeoutError,
  MigrationChecksumError,
  MigrationError,
  MigrationLockError,
  RETRYABLE_CONNECTION_CODES,
  RETRYABLE_MYSQL_ERRNOS,
  SchemaVersionError,
  SessionInitError,
  StoreError,
  isConnectionError,
  isDeadlock,
  isDuplicateKeyError,
  isLockConflict,
  isNoSuchTableError,
  isNoSuchColumnError,
  isNoSuchIndexError,
  isRetryableMysqlError,
  toError,
} from './errors.js';
export type { MysqlDriverError } from './errors.js';

export { listTables, showCreateTables } from './queries/schema.js';
export { appendEvents } from './queries/events.js';
export type { NewEvent } from './queries/events.js';
export { alertDedupKey, raiseAlert } from './queries/alerts.js';
export type { AlertKind, NewAlert } from './queries/alerts.js';

export {
  TASK_COLUMNS,
  TaskExistsError,
  TeamMissingError,
  TaskVersionConflictError,
  StoredTaskUnreadableError,
  deleteTask,
  disableTask,
  enableTask,
  getTask,
  getTaskById,
  getTaskTeam,
  insertTask,
  listEdges,
  listEdgesWithTeams,
  listEdgesWithTeamsFrom,
  listEdgesWithTeamsReachableFrom,
  listTaskNames,
  listTasks,
  replaceTask,
  setTasksManagedBy,
  withdrawPrecreatedSlots,
  setTaskEnabled,
  taskFromRow,
} from './queries/tasks.js';
export type { ListTasksOptions, SavedBy, TaskEdgeRow, TaskRecord, TeamedEdgeRow } from './queries/tasks.js';
export { TASK_VERSIONS_KEPT, getTaskVersion, listTaskVersions, recordTaskVersion } from './queries/task-versions.js';
export type { TaskVersionRecord } from './queries/task-versions.js';
export {
  SERIAL_WAITING_STATES,
  SLOT_INSERT_CHUNK,
  advanceWatermarks,
  createSlotInstances,
  existingSlotTimes,
  recordMisfireDecision,
  slotKey,
} from './queries/instances-create.js';
export type { SlotOutcome, SlotRange, SlotToCreate, WatermarkMove } from './queries/instances-create.js';

// Broker queries: state transitions, dispatch, replies, timed transitions, alert delivery.
export { NOW, WAIT_ENDED, increment, nowPlusMs, transitionInstance } from './queries/transitions.js';
export type { InstanceColumn, InstanceTransition, SqlExpr } from './queries/transitions.js';
export { markExecutionsAcked, recordExecutionOutcomes, transitionInstances } from './queries/bulk-transitions.js';
export type { BulkTransition } from './queries/bulk-transitions.js';
export {
  activeRunsOfTasks,
  anyDuePending,
  claimDuePending,
  insertExecutions,
  isDispatchPaused,
  loadTasksById,
  TaskDefinitionCache,
  lockTasksForBlockCheck,
  recordNoWorker,
  recordWaitingOnce,
  rerunBatchLoads,
  setDispatchPaused,
  setExecutionState,
  setMissingTraceParents,
  startAckDeadlines,
} from './queries/dispatch.js';
export type { ActiveRun, ClaimOptions, ClaimedInstance, NewExecution, RerunBatchLoad, WaitingEventType } from './queries/dispatch.js';
export { activeRunsByTeam, lockTeamLimits } from './queries/team-limits.js';
export { claimStartable, claimUnroutable, teamsWithPending } from './queries/claim-by-team.js';
export type { StartableClaim, WorkerCapability } from './queries/claim-by-team.js';
export { databaseNow, deferralLoadByTask, lockDeferrable, recordDeferredOnce } from './queries/backlog-deferral.js';
export type { TaskDeferralLoad } from './queries/backlog-deferral.js';
export { warmTaskDefinitions } from './queries/definition-warm.js';
export type { WarmOutcome } from './queries/definition-warm.js';
export {
  insertDeadLetter,
  lockExecutions,
  markExecutionAcked,
  readExecutions,
  recordExecutionOutcome,
} from './queries/results.js';
export type { ExecutionOutcome, ExecutionWithInstance } from './queries/results.js';
export { ackExpiredWorkerIds, anyUnfinished, extendLease, scanAckExpired, scanLeaseExpired, scanLongRunning, scanRetryDue, scanDispatchedExecutions, scanRunningOfWorkers, scanSlaMissed, nextRetryDueInMs, nextAckExpiryInMs } from './queries/timers.js';
export type { LongRunning, SlaMiss, SlaMissed, TimedInstance } from './queries/timers.js';
export { waitingPastDependencyTimeout } from './queries/dependency-timeouts.js';
export type { TimedOutWaiting } from './queries/dependency-timeouts.js';
export { LOG_PURGE_BATCH_ROWS, addToDailyStats, deleteInstancesWithHistory, lockEndedInstances, purgeLogsOfInstances } from './queries/retention.js';
export type { DailyStatsDelta, EndedInstance, LogPurgeOutcome } from './queries/retention.js';
export {
  countShardAckTimeouts,
  dispatchShardRetry,
  inFlightBroadcasts,
  insertShardExecution,
  latestShardExecutions,
  loadInstancesForDispatch,
  restartShardAckClocks,
  scanShardAckExpired,
  scanShardRetryDue,
  scanShardsRunning,
} from './queries/shard-executions.js';
export type { ShardExecution, TimedShard } from './queries/shard-executions.js';
export { workersOfExecutions } from './queries/execution-workers.js';
export { TASK_ROWS_PER_PAGE, scheduledTaskWatermarkPages, scheduledTaskWatermarksOf, taskHeadPages } from './queries/task-pages.js';
export type { TaskHead, TaskWatermarkRow } from './queries/task-pages.js';
export { LOG_PAGE_MAX_BYTES, appendLogItems, encodeLogChunks, insertLogChunks, insertLogEnds, logSizesOfExecutions, logViewState, readLogEnd, readLogLayout, readLogPage } from './queries/logs.js';
export type { AppendOutcome, EncodedLogChunk, LogEnd, LogLayout, LogPage, LogView, LogViewState, NewLogChunk, ReadLogPageOptions } from './queries/logs.js';
export { assemblePage, contiguousEnd, mergeSpans, storedBytes, streamComplete } from './queries/log-spans.js';
export type { AssembledPage, LogPiece, LogRun, LogSpan } from './queries/log-spans.js';
export { listAlertDeliveries, listUndeliveredAlerts, markAlertDelivered, recordAlertDelivery } from './queries/alerts-delivery.js';
export { getTeamsAlertRoutes, setTeamAlertRoutes } from './queries/team-alert-routes.js';
export {
  EnrollmentNameTakenError,
  dropTeamFromEnrollments,
  getEnrollment,
  getLiveEnrollmentByCredentialHash,
  insertEnrollment,
  listEnrollments,
  liveEnrollmentTeams,
  revokeEnrollment,
} from './queries/enrollments.js';
export type { EnrollmentRecord, NewEnrollment } from './queries/enrollments.js';
export { PAUSED_BY_FAILURES, pauseTaskAfterFailures } from './queries/task-pause.js';
export { earliestWaitingSlots } from './queries/block-queue.js';
export {
  CalendarInUseError,
  deleteCalendar,
  getCalendar,
  getCalendars,
  listCalendars,
  putCalendar,
  recordCalendarSkips,
  tasksUsingCalendar,
} from './queries/calendars.js';
export type { CalendarRecord, CalendarSkip } from './queries/calendars.js';
export type { PausedTask } from './queries/task-pause.js';
export type { AlertDeliveryRecord, AlertRouteState, PendingAlert } from './queries/alerts-delivery.js';

// Admin API queries (tokens, audit, edges, instances, reruns, claims, stats, dead letters, flags).
export {
  ALL_TEAMS,
  TokenNameTakenError,
  dropTeamFromTokens,
  findApiTokenByHash,
  getApiToken,
  insertApiToken,
  listApiTokens,
  revokeApiToken,
  touchApiToken,
  upsertApiToken,
} from './queries/tokens.js';
export { TeamExistsError, TeamInUseError, deleteTeam, existingTeams, getTeam, insertTeam, listTeams, rotateTeamKey, updateTeam } from './queries/teams.js';
export type { TeamRecord } from './queries/teams.js';
export type { ApiTokenRecord, BootstrapTokenOutcome } from './queries/tokens.js';
export { deleteConsoleSession, deleteExpiredConsoleSessions, findConsoleSession, insertConsoleSession, touchConsoleSession } from './queries/console-sessions.js';
export type { ConsoleSessionRecord, ConsoleSessionToken, NewConsoleSession } from './queries/console-sessions.js';
export { insertAuditEntry, listAuditEntries } from './queries/audit.js';
export type { AuditEntry, ListAuditOptions, NewAuditEntry } from './queries/audit.js';
export { bumpDagVersion, deleteEdge, insertEdge, listIncomingEdges, listSchedulerEdges, lockDag, recordEdgeTeams, setEdgeRule } from './queries/edges.js';
export type { IncomingEdgeRow, SchedulerEdgeRow } from './queries/edges.js';
export {
  INSTANCE_COLUMNS,
  bizDateText,
  dagGridCells,
  getExecution,
  getInstance,
  instanceFromRow,
  instanceTeamFilter,
  instanceTeamSql,
  instancesAtSlots,
  instancesOfBizDate,
  listExecutions,
  listInstanceEvents,
  listInstances,
} from './queries/instances-read.js';
export type { EventRecord, ExecutionRecord, GridCellRecord, InstanceRecord, ListInstancesOptions } from './queries/instances-read.js';
export { backlogGroups, backlogSummary, batchLoadsUnlocked, clearStaleWaiting, readBacklog, waitingOfInstances, writeWaitingChanges } from './queries/instance-waiting.js';
export type { BacklogGroup, BacklogRow, BacklogSummary, HeldState, InstanceWaiting, WaitingChange } from './queries/instance-waiting.js';
export {
  TRIGGER_IDEMPOTENCY_WINDOW_HOURS,
  bindIdempotencyKey,
  cancelInstance,
  insertManualInstance,
  reserveIdempotencyKey,
} from './queries/instances-manual.js';
export type { CancelOutcome, ManualInstance } from './queries/instances-manual.js';
export {
  DOWNSTREAM_GRACE_SECONDS,
  RERUN_CANCEL_ACTION,
  getRerunBatch,
  insertRerunBatch,
  instancesOfRerunBatch,
  listRerunBatches,
  rerunBatchCancels,
  rerunBatchCounts,
  rerunBatchOfBizDate,
  rerunBatchesAwaitingDownstream,
  rerunBatchTarget,
  rerunBatchTeams,
  rerunInstance,
} from './queries/reruns.js';
export type { NewRerunBatch, RerunBatchCancel, RerunBatchRecord, RerunTarget } from './queries/reruns.js';
export { claimRun, isExecutionLive } from './queries/claims.js';
export type { ClaimOutcome } from './queries/claims.js';
export { dayStats, hourlyStats } from './queries/stats.js';
export type { DayStats, HourStats } from './queries/stats.js';
export {
  daysToRollUp,
  dueDaysOf,
  firstDayOfTask,
  forgetRolledUpDays,
  forgetRolledUpDaysFrom,
  ROLLUP_AFTER_MS,
  rolledUpHourlyStats,
  mayBeRolledUp,
  rollUpDay,
} from './queries/stats-rollup.js';
export { reindexStaleTaskTexts } from './queries/task-text.js';
export type { RollUpOutcome } from './queries/stats-rollup.js';
export { currentRunTimes, runDurationMs } from './queries/run-times.js';
export { lastRunsOf } from './queries/task-last-run.js';
export type { LastRun } from './queries/task-last-run.js';
export type { RunTimes } from './queries/run-times.js';
export { listAlerts } from './queries/alerts-read.js';
export type { AlertRecord, ListAlertsOptions } from './queries/alerts-read.js';
export { listDeadLetters } from './queries/dead-letters.js';
export type { DeadLetterRecord } from './queries/dead-letters.js';
export { DISPATCH_PAUSED_FLAG, getSystemFlag, readDispatchPause, setSystemFlag, writeDispatchPause, type DispatchPause } from './queries/flags.js';
