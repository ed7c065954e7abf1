import { queueAnnouncement, runsChannel } from "../../src/agentserver/runs/announcements.ts";
import type { RunningAgentServer } from "../../src/agentserver/server.ts";

/**
 * Puts a run straight into the runs table, as a run created by the API would be, and
 * announces it to the workers: for tests that need a run whose assistant the server never
 * read (the attempt then reads it from the database).
 */
export async function queueRawRun(db: RunningAgentServer["db"], run: { runId: string; threadId: string; assistantId: string; content: string }): Promise<void> {
  const kwargs = {
    input: { messages: [{ role: "human", content: run.content }] },
    command: null,
    config: {},
    context: {},
    stream_mode: ["values"],
    stream_subgraphs: false,
    stream_resumable: false,
    interrupt_before: null,
    interrupt_after: null,
    checkpoint_id: null,
    checkpoint_ns: "",
    durability: "async",
    webhook: null,
    on_disconnect: "continue",
    temporary: false,
    feedback_keys: null,
  };
  await db.query("INSERT INTO runs (run_id, thread_id, assistant_id, kwargs) VALUES ($1, $2, $3, $4::jsonb)", [
    run.runId,
    run.threadId,
    run.assistantId,
    JSON.stringify(kwargs),
  ]);
  await db.notify(runsChannel(db.schema), queueAnnouncement(run.runId, 0, run.threadId));
}
