import type { StateSnapshotLike } from "../graphs/registry.ts";

/** LangGraph's config key for a checkpointer lent to a graph's state methods (threads/snapshot.ts). */
const LENT_CHECKPOINTER = "__pregel_checkpointer";

/** Runs' end states kept at most: a stateless run's thread is never read back, so its entry goes only when pushed out. */
const KEPT = 256;

interface LentCheckpointer {
  getTuple(config: { configurable: Record<string, unknown> }): Promise<{ checkpoint: { id: string } } | undefined>;
}

/**
 * The thread's state a Python run ended on, as the worker computed it from the run's own
 * last save and sent with the run's answer. The run's end (threads/snapshot.ts, with the
 * checkpointer the run's tail lends) reads it here instead of asking the worker again.
 * It is used only when the lent checkpointer's newest checkpoint is the one the state was
 * read from; any other read (an older checkpoint, subgraphs, no lent checkpointer) goes
 * to the worker as before.
 */
export class RunEndStates {
  private readonly states = new Map<string, StateSnapshotLike>();

  keep(threadId: string, state: StateSnapshotLike): void {
    this.states.delete(threadId);
    this.states.set(threadId, state);
    if (this.states.size > KEPT) this.states.delete(this.states.keys().next().value!);
  }

  /** The kept state when `config` is a run end's read of its thread's newest checkpoint; taken, so it is used once. */
  async answer(config: { configurable?: Record<string, unknown> }): Promise<StateSnapshotLike | undefined> {
    const configurable = config.configurable ?? {};
    const threadId = configurable.thread_id;
    const lent = configurable[LENT_CHECKPOINTER] as LentCheckpointer | undefined;
    if (typeof threadId !== "string" || !lent || configurable.checkpoint_id) return undefined;
    const state = this.states.get(threadId);
    if (!state) return undefined;
    this.states.delete(threadId);
    const newest = await lent.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "" } });
    return newest && newest.checkpoint.id === state.config.configurable?.checkpoint_id ? state : undefined;
  }
}
