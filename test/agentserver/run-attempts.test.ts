import { afterEach, describe, expect, it } from "vitest";
import { queueAnnouncement, runsChannel } from "../../src/agentserver/runs/announcements.ts";
import { MAX_RUN_ATTEMPTS } from "../../src/agentserver/runs/attempt.ts";
import { BACKENDS } from "../support/backends.ts";
import { queueRawRun } from "../support/raw-run.ts";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";

/** A run that keeps being retried (its end never recorded) stops after MAX_RUN_ATTEMPTS. */
describe.each(BACKENDS)("run attempts on %s", (backend) => {
  let agent: TestAgentServer | undefined;
  afterEach(async () => {
    await agent?.close();
    agent = undefined;
  });

  it("ends a run claimed for the time after the last allowed attempt in error, and the thread serves again", async () => {
    agent = await startTestAgentServer(backend);
    const { client, server } = agent;
    const thread = await client.threads.create();
    const [assistant] = await client.assistants.search({ graphId: "agent" });
    const runId = crypto.randomUUID();
    // As the sweeper leaves a run after its previous attempts: pending, attempt counted.
    await server.db.query(`INSERT INTO runs (run_id, thread_id, assistant_id, kwargs, attempt) VALUES ($1, $2, $3, '{}', $4)`, [
      runId,
      thread.thread_id,
      assistant.assistant_id,
      MAX_RUN_ATTEMPTS,
    ]);
    await server.db.notify(runsChannel(server.db.schema), queueAnnouncement(runId, 0, thread.thread_id));
    await client.runs.join(thread.thread_id, runId);
    const run = await client.runs.get(thread.thread_id, runId);
    expect(run.status).toBe("error");
    const [row] = await server.db.query<{ error: { error: string } }>("SELECT error FROM runs WHERE run_id = $1", [runId]);
    expect(row.error.error).toBe("RunAttemptsExceeded");
    const values = await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: "again" }] } });
    expect((values as { messages: Array<{ content: string }> }).messages.at(-1)?.content).toBe("You said: again");
  });

  it("gives a run another attempt when reading its assistant fails in the database, instead of ending it as AssistantNotFound", async () => {
    agent = await startTestAgentServer(backend, { leaseSeconds: 1 });
    const { client, server } = agent;
    const thread = await client.threads.create();
    // An assistant this server never read, so that the attempt reads it from the database.
    const assistantId = crypto.randomUUID();
    await server.db.query(`INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'agent', 'fresh')`, [assistantId]);
    // The database fails the read (a real error: the table is not there under its name).
    await server.db.query("ALTER TABLE assistants RENAME TO assistants_away");
    const runId = crypto.randomUUID();
    await queueRawRun(server.db, { runId, threadId: thread.thread_id, assistantId, content: "later" });
    // Either its first attempt ended it, or the sweeper gave it a second one.
    const row = async () =>
      (
        await server.db.query<{ status: string; attempt: number; error: { error: string } | null }>(
          "SELECT status, attempt, error FROM runs WHERE run_id = $1",
          [runId],
        )
      )[0]!;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const { status, attempt } = await row();
      if (status === "error" || attempt >= 2) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const seen = await row();
    expect(seen.error?.error).toBeUndefined();
    expect(seen.attempt).toBeGreaterThanOrEqual(2);
    // The database answers again: a later attempt runs the graph.
    await server.db.query("ALTER TABLE assistants_away RENAME TO assistants");
    await client.runs.join(thread.thread_id, runId);
    expect((await row()).status).toBe("success");
  });
});
