import type { RunAssistant } from "./executor.ts";

/**
 * The assistant a run was created with, kept in memory for a worker of this process
 * that claims the run, which then skips reading it again. A run claimed by another
 * process (or retried after a restart) reads the assistant from the database instead.
 * Bounded: the oldest entries go first (their runs were surely claimed elsewhere).
 */
export class AssistantHandoff {
  private readonly byRun = new Map<string, RunAssistant>();

  constructor(private readonly capacity = 10_000) {}

  put(runId: string, assistant: RunAssistant): void {
    if (this.byRun.size >= this.capacity) {
      const oldest = this.byRun.keys().next().value;
      if (oldest !== undefined) this.byRun.delete(oldest);
    }
    this.byRun.set(runId, assistant);
  }

  /** The assistant for `runId`, once; later calls get undefined. */
  take(runId: string): RunAssistant | undefined {
    const assistant = this.byRun.get(runId);
    this.byRun.delete(runId);
    return assistant;
  }
}
