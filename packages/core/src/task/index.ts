// Task definitions: schema, defaults, YAML job files, templates, redaction.
export {
  BLOCK_STRATEGIES,
  DEFAULT_CATCH_UP_MAX,
  DEFAULT_DEPENDENCY_TIMEOUT_SECONDS,
  DEFAULT_MANAGED_BY,
  MANAGED_BY_PATTERN,
  DEPENDENCY_RULES,
  MAX_DEPENDS_ON,
  dependsOnSchema,
  MAX_BLOCK_QUEUE,
  MAX_CATCH_UP,
  MAX_PAUSE_AFTER_FAILURES,
  MAX_SLA_SECONDS,
  MAX_RETRIES,
  MAX_TIMEOUT_SECONDS,
  ROUTE_STRATEGIES,
  TAG_PATTERN,
  TASK_DEFINITION_FIELDS,
  TASK_NAME_PATTERN,
  TASK_RESOURCE_FIELDS,
  TEAM_NAME_PATTERN,
  DEFAULT_TEAM,
  teamNameSchema,
  blockSchema,
  isQueueBlock,
  maxWaitingOf,
  misfireSchema,
  parseTaskDefinition,
  parseTaskDefinitionOrThrow,
  retrySchema,
  slaSchema,
  FORBIDDEN_TASK_HEADERS,
  taskDefinitionSchema,
} from './definition.js';
export type {
  BlockStrategy,
  DependencyRule,
  DependsOnEntry,
  MisfirePolicy,
  ParseTaskOptions,
  RetryPolicy,
  RouteStrategy,
  TaskDefinition,
  TaskDefinitionInput,
  TaskSla,
  ValidationResult,
} from './definition.js';
export {
  EXEC_FIELDS,
  EXEC_TYPES,
  HTTP_METHODS,
  MAX_PYTHON_CODE_BYTES,
  RESERVED_HEADER_NAMES,
  SECRET_NAME_PATTERN,
  execSchema,
  httpExecSchema,
  pluginExecSchema,
  pythonExecSchema,
  secretRefSchema,
  secretableValueSchema,
  shellExecSchema,
  sqlExecSchema,
} from './exec-schema.js';
export type { Exec, ExecInput, HttpExec, PluginExec, PythonExec, SecretRef, SecretableValue, ShellExec, SqlExec } from './exec-schema.js';
export { describeValue, formatPath } from './issues.js';
export { MAX_JSON_DEPTH, structureProblems } from './json-guard.js';
export type { StructureProblem } from './json-guard.js';
export { JSON_BODY_LIMITS, jsonSizeExcess } from './json-size.js';
export type { JsonSizeExcess, JsonSizeLimits } from './json-size.js';
export { REDACTED, redactConfigStrings, redactTaskSecrets, redactUrlUserInfo } from './redact.js';
export { expandExecTemplates, expandTemplate, expandTemplateValue, templateProblems } from './template.js';
export type { TemplateContext } from './template.js';
export { MAX_TASK_YAML_BYTES, MAX_TASK_YAML_DOCUMENTS, MAX_TASK_YAML_ISSUES, TASK_YAML_MAX_ALIAS_COUNT, TASK_YAML_MAX_DEPTH, TASK_YAML_MAX_INDENT, parseTaskYaml, taskYamlSteps } from './yaml-import.js';
export type { TaskYamlIssue, TaskYamlLimit, TaskYamlResult } from './yaml-import.js';
export { CALENDAR_NAME_PATTERN, MAX_CALENDAR_DATES, calendarBodySchema, calendarNameSchema, parseCalendarBody } from './calendar-schema.js';
export type { CalendarBody } from './calendar-schema.js';
export { dependsOnOf, planDependsOn } from './depends-on.js';
export type { DependencyEdge, DependsOnPlan, PlanDependsOnOptions } from './depends-on.js';
export { definitionOf, formatTaskYaml } from './yaml-export.js';
export { STORED_DEFINITION_DEFAULTED_KEYS, trustedTaskDefinition } from './stored-definition.js';
