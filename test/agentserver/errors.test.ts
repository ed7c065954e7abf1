import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";

const UNKNOWN = "00000000-0000-4000-8000-000000000000";

describe.each(BACKENDS)("agent server errors on %s", (backend) => {
  let t: TestAgentServer;
  beforeAll(async () => {
    t = await startTestAgentServer(backend, { bodyLimit: 64 * 1024 });
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (path: string, body: unknown) =>
    fetch(`${t.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });

  it("404 for an unknown thread, run and assistant", async () => {
    const thread = await post(`/threads/${UNKNOWN}/runs`, { assistant_id: "agent" });
    expect(thread.status).toBe(404);
    expect((await thread.json()).detail).toContain(UNKNOWN);

    const created = await t.client.threads.create();
    const run = await fetch(`${t.url}/threads/${created.thread_id}/runs/${UNKNOWN}`);
    expect(run.status).toBe(404);

    const assistant = await post(`/threads/${created.thread_id}/runs`, { assistant_id: "no-such-graph" });
    expect(assistant.status).toBe(404);
    expect((await assistant.json()).detail).toMatch(/no-such-graph/);
  });

  it("422 names the offending field and changes nothing", async () => {
    const created = await t.client.threads.create();
    const before = await t.client.runs.list(created.thread_id);
    const cases: Array<[unknown, RegExp]> = [
      [{ assistant_id: "agent", multitask_strategy: "sideways" }, /multitask_strategy/],
      [{ assistant_id: "agent", stream_mode: "everything" }, /stream_mode/],
      [{ assistant_id: "agent", bogus_field: 1 }, /bogus_field/],
      [{ input: {} }, /assistant_id/],
      [{ assistant_id: "agent", after_seconds: -1 }, /after_seconds/],
      [{ assistant_id: "agent", feedback_keys: ["k"] }, /feedback_keys/],
      [{ assistant_id: "agent", input: { a: 1 }, command: { resume: 1 } }, /command/],
      [{ assistant_id: "agent", webhook: "http://127.0.0.1:9/hook" }, /webhook/],
      [{ assistant_id: "agent", webhook: "ftp://example.com/x" }, /webhook/],
    ];
    for (const [body, field] of cases) {
      const response = await post(`/threads/${created.thread_id}/runs`, body);
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect((await response.json()).detail).toMatch(field);
    }
    expect(await t.client.runs.list(created.thread_id)).toEqual(before);
  });

  it("422 for malformed JSON and for a non-uuid id", async () => {
    const malformed = await post("/runs/wait", "{not json");
    expect(malformed.status).toBe(422);
    expect(typeof (await malformed.json()).detail).toBe("string");
    const badId = await fetch(`${t.url}/threads/not-a-uuid/runs`);
    expect(badId.status).toBe(422);
    expect((await badId.json()).detail).toMatch(/thread_id/);
  });

  it("413 for an oversized body", async () => {
    const response = await post("/runs/wait", { assistant_id: "agent", input: { blob: "x".repeat(100 * 1024) } });
    expect(response.status).toBe(413);
    expect((await response.json()).detail).toBeTruthy();
  });

  it("409 when deleting a run that is still active", async () => {
    const created = await t.client.threads.create();
    const run = await t.client.runs.create(created.thread_id, "slow", { input: { delay_ms: 300, steps: 2 } });
    const response = await fetch(`${t.url}/threads/${created.thread_id}/runs/${run.run_id}`, { method: "DELETE" });
    expect(response.status).toBe(409);
    await t.client.runs.join(created.thread_id, run.run_id);
    const again = await fetch(`${t.url}/threads/${created.thread_id}/runs/${run.run_id}`, { method: "DELETE" });
    expect(again.status).toBe(200);
  });
});

describe("agent server API key", () => {
  let t: TestAgentServer;
  beforeAll(async () => {
    t = await startTestAgentServer("pglite", { apiKey: "secret-key" });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("401 without the key, 403 with a wrong one, open meta routes", async () => {
    expect((await fetch(`${t.url}/threads/search`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } })).status).toBe(401);
    const wrong = await fetch(`${t.url}/threads/search`, { method: "POST", body: "{}", headers: { "content-type": "application/json", "x-api-key": "nope" } });
    expect(wrong.status).toBe(403);
    for (const path of ["/ok", "/info", "/openapi.json"]) expect((await fetch(`${t.url}${path}`)).status, path).toBe(200);
    const threads = await t.client.threads.search();
    expect(Array.isArray(threads)).toBe(true);
  });
});
