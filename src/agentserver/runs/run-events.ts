// The run_events statements live in the runs repository. This alias serves the importers
// not yet pointed there (runs/attempt.ts, runs/stream-response.ts); new code imports
// them from ./repository.ts.
export { loadRunEvents, persistRunEvents } from "./repository.ts";
