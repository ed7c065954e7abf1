/**
 * Slipway's LangGraph checkpointer: checkpoints, channel values and pending writes
 * in the agent server's database (tables in storage/migrations/agent/0002_checkpoints.sql).
 */
export { SlipwaySaver, type CheckpointHead, type SlipwaySaverOptions } from "./saver.ts";
export { nextChannelVersion } from "./versions.ts";
