// The run_events statements live in the runs repository. This alias serves its last
// importer (runs/attempt.ts); new code imports them from ./repository.ts.
export { loadRunEvents, persistRunEvents } from "./repository.ts";
