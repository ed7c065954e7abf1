import { TaskState, type StreamResponse, type Task } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { a2aClientFactory, answerOf, fetchWithHeader, send, userMessage } from "../support/a2a-client.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemAssistantId } from "../../src/agentserver/assistants/index.ts";
import { BACKENDS } from "../support/backends.ts";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";

/**
 * `/a2a/{assistant_id}` driven by the official A2A client (@a2a-js/sdk 1.3, its v0.3
 * JSON-RPC transport, which the card's protocolVersion selects), and by raw requests
 * for bad input. The `agent` graph answers with the echo model; `slow` holds a run busy.
 */
const KEY = "a2a-key";
const withKey = fetchWithHeader("x-api-key", KEY);

describe.each(BACKENDS)("A2A endpoint on %s", (backend) => {
  let agent: TestAgentServer;
  let client: Client;
  const agentId = systemAssistantId("agent");
  const rpc = (assistant: string, body: unknown, key = KEY) =>
    fetch(`${agent.url}/a2a/${assistant}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  beforeAll(async () => {
    agent = await startTestAgentServer(backend, { apiKey: KEY, workers: 4 });
    client = await a2aClientFactory(withKey).createFromUrl(`${agent.url}/.well-known/agent-card.json?assistant_id=${agentId}`, "");
  });
  afterAll(async () => {
    await agent?.close();
  });

  it("serves the agent card where the vendor does and below the endpoint", async () => {
    const card = await client.getAgentCard();
    expect(card.name).toBe("agent");
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.supportedInterfaces[0]?.url).toBe(`${agent.url}/a2a/${agentId}`);
    const raw = await (await fetch(`${agent.url}/a2a/agent/.well-known/agent-card.json`, { headers: { "x-api-key": KEY } })).json();
    expect(raw).toMatchObject({ protocolVersion: "0.3.0", url: `${agent.url}/a2a/${agentId}`, preferredTransport: "JSONRPC" });
    const forwarded = await fetch(`${agent.url}/.well-known/agent-card.json?assistant_id=agent`, {
      headers: { "x-api-key": KEY, "x-forwarded-host": "agents.example", "x-forwarded-proto": "https", "x-forwarded-prefix": "/deployments/d1" },
    });
    expect((await forwarded.json()).url).toBe(`https://agents.example/deployments/d1/a2a/${agentId}`);
    expect((await fetch(`${agent.url}/.well-known/agent-card.json?assistant_id=nope`, { headers: { "x-api-key": KEY } })).status).toBe(404);
    expect((await fetch(`${agent.url}/.well-known/agent-card.json?assistant_id=agent`)).status).toBe(401);
  });

  it("sends a message and continues the conversation on the same context (thread)", async () => {
    const first = await send(client, userMessage("first words"));
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(first)).toBe("You said: first words");
    const second = await send(client, userMessage("second words", first.contextId));
    expect(second.contextId).toBe(first.contextId);
    expect(second.id).not.toBe(first.id);
    expect(answerOf(second)).toBe("You said: second words");
    // One thread holds both turns; each task is one of its runs.
    const state = await agent.client.threads.getState<{ messages: Array<{ content: string }> }>(first.contextId);
    expect(state.values.messages.map((m) => m.content)).toEqual(["first words", "You said: first words", "second words", "You said: second words"]);
    const runs = await agent.client.runs.list(first.contextId);
    expect(runs.map((run) => run.run_id).sort()).toEqual([first.id, second.id].sort());
    const fetched = await client.getTask({ tenant: "", id: first.id });
    expect(fetched).toMatchObject({ id: first.id, contextId: first.contextId });
    expect(fetched.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("streams a message: the task, its work, the answer, a final status", async () => {
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream({ tenant: "", message: userMessage("stream me"), configuration: undefined, metadata: undefined }))
      events.push(event);
    const kinds = events.map((event) => event.payload?.$case);
    expect(kinds).toEqual(["task", "statusUpdate", "artifactUpdate", "statusUpdate"]);
    const submitted = events[0]!.payload!.value as Task;
    const artifact = events[2]!.payload!.value as { artifact?: { parts: Array<{ content?: { $case: string; value: unknown } }> } };
    expect(artifact.artifact?.parts[0]?.content).toEqual({ $case: "text", value: "You said: stream me" });
    const final = events[3]!.payload!.value as { status?: { state: TaskState }; taskId: string };
    expect(final.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(final.taskId).toBe(submitted.id);
    expect((await agent.client.runs.get(submitted.contextId, submitted.id)).status).toBe("success");
  });

  it("cancels a task: the run is cancelled on the server", async () => {
    const slow = await a2aClientFactory(withKey).createFromUrl(`${agent.url}/a2a/slow/.well-known/agent-card.json`, "");
    // A data part is merged into the graph's input: slow then takes 30 steps of 200 ms.
    const message = userMessage("hold on");
    message.parts.push({ content: { $case: "data", value: { delay_ms: 200, steps: 30 } }, metadata: undefined, filename: "", mediaType: "application/json" });
    const stream = slow.sendMessageStream({ tenant: "", message, configuration: undefined, metadata: undefined });
    const first = await stream.next();
    const task = first.value!.payload!.value as Task;
    const canceled = await slow.cancelTask({ tenant: "", id: task.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await agent.client.runs.get(task.contextId, task.id)).status).toBe("interrupted");
    const rest: StreamResponse[] = [];
    for await (const event of stream) rest.push(event);
    expect((rest.at(-1)?.payload?.value as { status?: { state: TaskState } } | undefined)?.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // An ended task cannot be cancelled again.
    await expect(slow.cancelTask({ tenant: "", id: task.id, metadata: undefined })).rejects.toThrow(/cannot be canceled/);
  });

  it("answers bad input with JSON-RPC errors, never a 500", async () => {
    const error = async (response: Response) => ({ status: response.status, ...((await response.json()) as { error: { code: number; message: string } }) });
    expect(await error(await rpc("agent", "{oops"))).toMatchObject({ status: 400, error: { code: -32700 } });
    expect(await error(await rpc("agent", { jsonrpc: "2.0", method: "message/send" }))).toMatchObject({ status: 400, error: { code: -32600 } });
    expect(await error(await rpc("agent", { jsonrpc: "2.0", id: "1", method: "tasks/list", params: {} }))).toMatchObject({
      status: 200,
      id: "1",
      error: { code: -32601 },
    });
    expect(
      await error(await rpc("agent", { jsonrpc: "2.0", id: "2", method: "message/send", params: { message: { role: "user", parts: [] } } })),
    ).toMatchObject({ status: 400, id: "2", error: { code: -32602 } });
    const contextNotUuid = {
      jsonrpc: "2.0",
      id: "3",
      method: "message/send",
      params: { message: { role: "user", messageId: "m", contextId: "thread-1", parts: [{ kind: "text", text: "x" }] } },
    };
    expect(await error(await rpc("agent", contextNotUuid))).toMatchObject({ status: 400, error: { code: -32602 } });
    const file = {
      jsonrpc: "2.0",
      id: "4",
      method: "message/send",
      params: { message: { role: "user", messageId: "m", parts: [{ kind: "file", file: { uri: "http://x" } }] } },
    };
    expect(await error(await rpc("agent", file))).toMatchObject({ status: 400, error: { code: -32005 } });
    expect(await error(await rpc("nope", { jsonrpc: "2.0", id: "5", method: "tasks/get", params: { id: crypto.randomUUID() } }))).toMatchObject({
      status: 404,
      error: { code: -32001 },
    });
    expect(await error(await rpc("agent", { jsonrpc: "2.0", id: "6", method: "tasks/get", params: { id: crypto.randomUUID() } }))).toMatchObject({
      status: 200,
      error: { code: -32001 },
    });
    expect(await error(await rpc("agent", { jsonrpc: "2.0", id: "7", method: "tasks/get", params: { id: "not-a-task" } }))).toMatchObject({
      error: { code: -32001 },
    });
    expect((await rpc("agent", { jsonrpc: "2.0", id: "8", method: "tasks/get", params: { id: "x" } }, "wrong")).status).toBe(403);
  });
});
