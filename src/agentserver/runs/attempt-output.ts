import type { RunEvent, RunStreamWriter } from "../stream/run-streams.ts";
import type { RunRow } from "./repository.ts";

/**
 * What one attempt of a run sends on its stream. A resumable run's events are also kept
 * here, to be stored once its end is recorded (announce-end.ts), so that a client can
 * replay them after the run ended.
 */
export class AttemptOutput {
  readonly kept: RunEvent[] = [];

  constructor(
    private readonly streams: RunStreamWriter,
    private readonly run: RunRow,
  ) {}

  /** Publishes an event of this attempt (a bound function: the executor is handed it). */
  readonly emit = (event: string, data: unknown): void => {
    const record = this.streams.publish(this.run.run_id, { event, data, attempt: this.run.attempt });
    if (record && this.run.kwargs.stream_resumable) this.kept.push(record);
  };
}
