// DAG checks: cycles, order, downstream sets, readiness.
export { EDGE_RULES, childrenMap } from './edges.js';
export type { Edge, EdgeRule } from './edges.js';
export { findCycle } from './cycle.js';
export { downstreamOf, reachableFrom, topologicalOrder } from './order.js';
export { childReadiness, edgeSatisfied } from './readiness.js';
export type { Readiness } from './readiness.js';
