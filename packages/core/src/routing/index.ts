// Worker selection: eligibility, load score, strategies.
export { canServe, capacityOf, eligibleWorkers, explainNoWorker, freeSlots, ineligibility, isEligible, servesTeam, slotCapFor } from './worker-snapshot.js';
export { parseReservedSlots } from './reserved-slots.js';
export type { Ineligibility, ReservedSlots, RouteRequest, WorkerSnapshot } from './worker-snapshot.js';
export { DURATION_WEIGHT, OCCUPANCY_WEIGHT, loadScore } from './load-score.js';
export { hash53, rankByRendezvous, rendezvousWeight } from './rendezvous-hash.js';
export { broadcastTargets, pickByHash, pickByLoad, pickRoundRobin } from './strategies.js';
export type { BroadcastTarget, RoundRobinPick } from './strategies.js';
export { routeInstance } from './route.js';
export type { RouteContext, RouteDecision } from './route.js';
export { TeamQuota, teamsAtLimit } from './team-quota.js';
export { routableTeams } from './enrollment-teams.js';
export { holdThresholds, isDeferrable, nextBacklogHold, poolKeyOf } from './backlog-deferral.js';
export type { BacklogDeferralPolicy, PoolLoad, PoolRequest } from './backlog-deferral.js';
export { fairOrder, fairSequence, fairShares } from './fair-share.js';
export type { TeamDemand } from './fair-share.js';
