import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { collect, collectWithin, startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";

type Message = { type: string; content: unknown };
const human = (content: string) => ({ messages: [{ role: "human", content }] });

describe.each(BACKENDS)("runs on %s", (backend) => {
  let t: TestAgentServer;
  beforeAll(async () => {
    t = await startTestAgentServer(backend);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("seed flow: two enqueued runs execute in order and the state holds both", async () => {
    const thread = await t.client.threads.create();
    const first = await t.client.runs.create(thread.thread_id, "agent", { input: human("first"), multitaskStrategy: "enqueue" });
    const second = await t.client.runs.create(thread.thread_id, "agent", { input: human("second") });
    expect(second.multitask_strategy).toBe("enqueue");
    await t.client.runs.join(thread.thread_id, second.run_id);
    const state = await t.client.threads.getState<{ messages: Message[] }>(thread.thread_id);
    const contents = state.values.messages.map((m) => m.content);
    expect(contents).toEqual(["first", "You said: first", "second", "You said: second"]);
    expect((await t.client.runs.get(thread.thread_id, first.run_id)).status).toBe("success");
    expect((await t.client.runs.get(thread.thread_id, second.run_id)).status).toBe("success");
  });

  it("threadless stream in updates mode", async () => {
    const parts = await collect(t.client.runs.stream(null, "agent", { input: human("hello"), streamMode: "updates" }));
    expect(parts[0].event).toBe("metadata");
    const updates = parts.filter((p) => p.event === "updates");
    expect(updates).toHaveLength(1);
    const data = updates[0].data as { agent: { messages: Message[] } };
    expect(data.agent.messages[0].content).toBe("You said: hello");
  });

  it("threadless stream in messages-tuple mode sends token chunks", async () => {
    const parts = await collect(t.client.runs.stream(null, "agent", { input: human("one two"), streamMode: "messages-tuple" }));
    const chunks = parts.filter((p) => p.event === "messages").map((p) => (p.data as [Message, unknown])[0].content);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.join("")).toBe("You said: one two");
  });

  it("threadless stream in messages mode sends partial and complete messages", async () => {
    const parts = await collect(t.client.runs.stream(null, "agent", { input: human("abc"), streamMode: "messages" }));
    const events = parts.map((p) => p.event);
    expect(events).toContain("messages/metadata");
    expect(events).toContain("messages/partial");
    const complete = parts.filter((p) => p.event === "messages/complete");
    expect((complete.at(-1)!.data as Message[])[0].content).toBe("You said: abc");
  });

  it("wait returns the final values; a threadless run leaves no thread behind", async () => {
    const countCheckpoints = async () => (await t.server.db.query<{ n: number }>("SELECT count(*)::int AS n FROM checkpoints"))[0].n;
    const before = await t.client.threads.count();
    const checkpointsBefore = await countCheckpoints();
    const values = (await t.client.runs.wait(null, "agent", { input: human("w") })) as { messages: Message[] };
    expect(values.messages.at(-1)!.content).toBe("You said: w");
    expect(await t.client.threads.count()).toBe(before);
    expect(await countCheckpoints()).toBe(checkpointsBefore);
  });

  it("reject answers 409 while the thread is busy", async () => {
    const thread = await t.client.threads.create();
    const slow = await t.client.runs.create(thread.thread_id, "slow", { input: { delay_ms: 300, steps: 2 } });
    await expect(t.client.runs.create(thread.thread_id, "slow", { input: { steps: 1 }, multitaskStrategy: "reject" })).rejects.toThrow(/409/);
    await t.client.runs.join(thread.thread_id, slow.run_id);
    expect((await t.client.runs.list(thread.thread_id)).length).toBe(1);
  });

  it("interrupt stops the active run and keeps its record", async () => {
    const thread = await t.client.threads.create();
    const first = await t.client.runs.create(thread.thread_id, "slow", { input: { delay_ms: 200, steps: 20 } });
    await waitForStatus(t, thread.thread_id, first.run_id, "running");
    const second = await t.client.runs.create(thread.thread_id, "slow", { input: { delay_ms: 10, steps: 1 }, multitaskStrategy: "interrupt" });
    await t.client.runs.join(thread.thread_id, second.run_id);
    expect((await t.client.runs.get(thread.thread_id, first.run_id)).status).toBe("interrupted");
    expect((await t.client.runs.get(thread.thread_id, second.run_id)).status).toBe("success");
  });

  it("rollback removes the active run", async () => {
    const thread = await t.client.threads.create();
    const first = await t.client.runs.create(thread.thread_id, "slow", { input: { delay_ms: 200, steps: 20 } });
    await waitForStatus(t, thread.thread_id, first.run_id, "running");
    const second = await t.client.runs.create(thread.thread_id, "slow", { input: { delay_ms: 10, steps: 1 }, multitaskStrategy: "rollback" });
    await t.client.runs.join(thread.thread_id, second.run_id);
    await expect(t.client.runs.get(thread.thread_id, first.run_id)).rejects.toThrow(/404/);
    const runs = await t.client.runs.list(thread.thread_id);
    expect(runs.map((r) => r.run_id)).toEqual([second.run_id]);
  });

  it.each(["interrupt", "rollback"] as const)("%s ends the join stream of a run still queued behind the active one", async (strategy) => {
    const thread = await t.client.threads.create();
    const active = await t.client.runs.create(thread.thread_id, "slow", { input: { delay_ms: 200, steps: 20 } });
    await waitForStatus(t, thread.thread_id, active.run_id, "running");
    const queued = await t.client.runs.create(thread.thread_id, "slow", { input: { delay_ms: 10, steps: 1 } });
    const joined = collectWithin((signal) => t.client.runs.joinStream(thread.thread_id, queued.run_id, { signal }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const third = await t.client.runs.create(thread.thread_id, "slow", { input: { delay_ms: 10, steps: 1 }, multitaskStrategy: strategy });
    // The queued run never starts: its stream ends without events.
    expect(await joined).toEqual([]);
    await t.client.runs.join(thread.thread_id, third.run_id);
    if (strategy === "interrupt") expect((await t.client.runs.get(thread.thread_id, queued.run_id)).status).toBe("interrupted");
    else await expect(t.client.runs.get(thread.thread_id, queued.run_id)).rejects.toThrow(/404/);
  });

  it("cancel with interrupt and with rollback", async () => {
    const thread = await t.client.threads.create();
    const a = await t.client.runs.create(thread.thread_id, "slow", { input: { delay_ms: 200, steps: 20 } });
    await waitForStatus(t, thread.thread_id, a.run_id, "running");
    await t.client.runs.cancel(thread.thread_id, a.run_id, true, "interrupt");
    expect((await t.client.runs.get(thread.thread_id, a.run_id)).status).toBe("interrupted");

    const b = await t.client.runs.create(thread.thread_id, "slow", { input: { delay_ms: 200, steps: 20 } });
    await waitForStatus(t, thread.thread_id, b.run_id, "running");
    await t.client.runs.cancel(thread.thread_id, b.run_id, true, "rollback");
    await expect(t.client.runs.get(thread.thread_id, b.run_id)).rejects.toThrow(/404/);
  });

  it("interrupt() then resume with command", async () => {
    const thread = await t.client.threads.create();
    await t.client.runs.wait(thread.thread_id, "approval", { input: human("please") });
    const paused = await t.client.threads.get(thread.thread_id);
    expect(paused.status).toBe("interrupted");
    const values = (await t.client.runs.wait(thread.thread_id, "approval", { command: { resume: "yes" } })) as { messages: Message[] };
    expect(values.messages.at(-1)!.content).toBe("answer: yes");
    expect((await t.client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("resumable join stream replays after Last-Event-ID", async () => {
    const thread = await t.client.threads.create();
    const run = await t.client.runs.create(thread.thread_id, "slow", {
      input: { delay_ms: 50, steps: 4 },
      streamMode: ["values"],
      streamResumable: true,
    });
    await t.client.runs.join(thread.thread_id, run.run_id);
    const all = await rawEvents(`${t.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`, "-1");
    expect(all.length).toBeGreaterThan(3);
    expect(all[0].event).toBe("metadata");
    const rest = await rawEvents(`${t.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`, String(all[1].id));
    expect(rest.map((e) => e.id)).toEqual(all.slice(2).map((e) => e.id));
  });

  it("a failing graph ends its run in error and the server keeps serving", async () => {
    const thread = await t.client.threads.create();
    await expect(t.client.runs.wait(thread.thread_id, "failing", { input: human("x") })).rejects.toThrow(/failed on purpose/);
    const [run] = await t.client.runs.list(thread.thread_id);
    expect(run.status).toBe("error");
    expect((await t.client.threads.get(thread.thread_id)).status).toBe("error");
    const ok = await fetch(`${t.url}/ok`);
    expect(ok.status).toBe(200);
  });

  it("stream framing: SSE headers, event/data/id lines", async () => {
    const response = await fetch(`${t.url}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "agent", input: human("f"), stream_mode: ["values"], on_completion: "keep" }),
    });
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(response.headers.get("content-location")).toMatch(/^\/runs\/[0-9a-f-]{36}$/);
    const text = await response.text();
    expect(text).toMatch(/^event: metadata\ndata: \{"run_id":"[0-9a-f-]{36}","attempt":1\}\nid: 0\n\n/);
    expect(text).toContain("event: values\n");
  });
});

async function waitForStatus(t: TestAgentServer, threadId: string, runId: string, status: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await t.client.runs.get(threadId, runId)).status === status) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`run ${runId} never reached ${status}`);
}

async function rawEvents(url: string, lastEventId: string): Promise<Array<{ id: number; event: string; data: unknown }>> {
  const response = await fetch(url, { headers: { "Last-Event-ID": lastEventId } });
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.includes("event:"))
    .map((block) => {
      const lines = Object.fromEntries(
        block
          .split("\n")
          .filter((l) => !l.startsWith(":"))
          .map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)]),
      );
      return { id: Number(lines.id), event: lines.event, data: JSON.parse(lines.data) };
    });
}
