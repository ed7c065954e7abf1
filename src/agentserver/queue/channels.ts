/** NOTIFY channels of the run queue. */
export const RUNS_CHANNEL = "slipway_runs";
export const RUN_CANCEL_CHANNEL = "slipway_run_cancel";
