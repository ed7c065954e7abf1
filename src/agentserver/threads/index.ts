/**
 * The threads group of the agent server: threads, their state and history, TTLs.
 *
 * @example
 * const threads = new ThreadService({ db, graphs, checkpointer, beforeDelete: (id) => runs.cancelAllOf(id) });
 * registerThreadRoutes(app, { threads, state: new ThreadStateService({ db, graphs, checkpointer }) });
 * // when a run ends:
 * await refreshThreadSnapshot({ db, graphs }, threadId, error ? { runError: error } : undefined);
 */
export { registerThreadRoutes, type ThreadRouteDeps } from "./routes.ts";
export { ThreadService, removeThread, type ThreadCheckpointer, type ThreadServiceDeps } from "./service.ts";
export { ThreadStateService, type ThreadStateDeps } from "./state-service.ts";
export { computeThreadSnapshot, refreshThreadSnapshot, settledStatus } from "./snapshot.ts";
export type { SnapshotWrite } from "./repository.ts";
export { sweepExpiredThreads, type SweepResult } from "./sweep.ts";
export { toThread } from "./wire.ts";
export type { ThreadRow } from "./repository.ts";
export type { Thread, ThreadStatus, ThreadStateWire } from "./schemas.ts";
