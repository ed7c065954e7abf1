import { afterEach, describe, expect, it } from "vitest";
import { queueAnnouncement, runsChannel } from "../../src/agentserver/runs/announcements.ts";
import { MAX_RUN_ATTEMPTS } from "../../src/agentserver/runs/attempt.ts";
import { BACKENDS } from "../support/backends.ts";
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
    await server.db.query(
      `INSERT INTO runs (run_id, thread_id, assistant_id, kwargs, attempt) VALUES ($1, $2, $3, '{}', $4)`,
      [runId, thread.thread_id, assistant.assistant_id, MAX_RUN_ATTEMPTS],
    );
    await server.db.notify(runsChannel(server.db.schema), queueAnnouncement(runId, 0, thread.thread_id));
    await client.runs.join(thread.thread_id, runId);
    const run = await client.runs.get(thread.thread_id, runId);
    expect(run.status).toBe("error");
    const [row] = await server.db.query<{ error: { error: string } }>("SELECT error FROM runs WHERE run_id = $1", [runId]);
    expect(row.error.error).toBe("RunAttemptsExceeded");
    const values = await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: "again" }] } });
    expect((values as { messages: Array<{ content: string }> }).messages.at(-1)?.content).toBe("You said: again");
  });
});
