import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";
import { BACKENDS } from "../support/backends.ts";

/**
 * Issue 16 "No 500 for bad input" and issue 12 point 9 on the agent server: each class
 * of hostile input gets a clear 4xx naming the field and changes nothing, on both
 * storage back ends. (test/hostile-fuzz.test.ts sprays the same values everywhere.)
 */
const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

describe.each(BACKENDS)("hostile input to the agent server on %s", (backend) => {
  let t: TestAgentServer;
  beforeAll(async () => {
    t = await startTestAgentServer(backend, { workers: 2 });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A raw request: `body` is JSON text as sent (hostile values cannot all go through JSON.stringify). */
  const send = async (method: string, path: string, body?: string, headers: Record<string, string> = { "content-type": "application/json" }) => {
    const response = await fetch(`${t.url}${path}`, { method, headers, body });
    const text = await response.text();
    return { status: response.status, text, detail: text ? (JSON.parse(text)?.detail as string | undefined) : undefined };
  };
  const threadCount = async () => Number((await send("POST", "/threads/count", "{}")).text);
  const expect422 = async (response: Promise<{ status: number; detail?: string; text: string }>, field: RegExp) => {
    const { status, detail, text } = await response;
    expect(status, text.slice(0, 300)).toBe(422);
    expect(detail).toMatch(field);
  };

  it("takes an empty body with Content-Type: application/json as no body (issue 12, point 9)", async () => {
    const thread = await t.client.threads.create();
    const assistant = await t.client.assistants.create({ graphId: "agent" });
    expect((await send("DELETE", `/threads/${thread.thread_id}`, "")).status).toBe(200);
    expect((await send("GET", `/threads/${thread.thread_id}`)).status).toBe(404);
    expect((await send("DELETE", `/assistants/${assistant.assistant_id}`, "")).status).toBe(200);
    // Search has nothing required: an empty body means {}.
    expect((await send("POST", "/assistants/search", "")).status).toBe(200);
    // A route that needs a body names it as missing.
    await expect422(send("POST", "/threads/prune", ""), /^body: Field required$/);
    await expect422(send("DELETE", "/store/items", ""), /^body: Field required$/);
  });

  it("refuses NUL in strings, keys, query values and path segments, naming the field", async () => {
    const before = await threadCount();
    await expect422(send("POST", "/threads", '{"metadata":{"note":"a\\u0000b"}}'), /^metadata\.note: .*NUL/);
    await expect422(send("POST", "/threads", '{"metadata":{"k\\u0000":"v"}}'), /^metadata\.k\u0000: key .*NUL/);
    await expect422(send("POST", "/assistants/search", '{"name":"\\u0000"}'), /^name: .*NUL/);
    await expect422(send("PUT", "/store/items", '{"namespace":["n"],"key":"k","value":{"v":"\\u0000"}}'), /^value\.v: .*NUL/);
    await expect422(send("GET", "/store/items?key=%00"), /key: .*NUL/);
    await expect422(send("GET", "/assistants/%00"), /assistant_id: .*NUL/);
    expect(await threadCount()).toBe(before);
    expect((await send("GET", "/store/items?key=k&namespace=n")).text).toBe("null");
  });

  it("refuses lone surrogates in any string, naming the field", async () => {
    const before = await threadCount();
    await expect422(send("POST", "/threads", '{"metadata":{"a":"\\ud800"}}'), /^metadata\.a: .*surrogate/);
    await expect422(send("POST", "/assistants", '{"graph_id":"agent","name":"x\\udfffy"}'), /^name: .*surrogate/);
    await expect422(send("PUT", "/store/items", '{"namespace":["n"],"key":"\\ud800","value":{}}'), /^key: .*surrogate/);
    expect(await threadCount()).toBe(before);
  });

  it("refuses offset and limit beyond PostgreSQL's integers, in the body and the query", async () => {
    const thread = await t.client.threads.create();
    for (const big of ["99999999999999999999", "1e20"]) {
      await expect422(send("POST", "/threads/search", `{"offset":${big}}`), /^offset: /);
      await expect422(send("POST", "/assistants/search", `{"offset":${big}}`), /^offset: /);
      await expect422(send("POST", "/store/items/search", `{"limit":${big}}`), /^limit: /);
      await expect422(send("POST", "/store/namespaces", `{"offset":${big}}`), /^offset: /);
      await expect422(send("GET", `/threads/${thread.thread_id}/runs?offset=${big}`), /offset: /);
      await expect422(send("POST", "/assistants/agent/latest", `{"version":${big}}`), /^version: /);
    }
    expect((await send("POST", "/threads/search", '{"offset":2147483647}')).text).toBe("[]");
  });

  it("refuses JSON nested 10,000 deep in metadata, config, input and a store filter", async () => {
    const before = await threadCount();
    await expect422(send("POST", "/threads", `{"metadata":${deep(10_000)}}`), /^metadata: nests deeper than 100 levels$/);
    await expect422(send("POST", "/assistants", `{"graph_id":"agent","config":${deep(10_000)}}`), /^config: nests deeper/);
    await expect422(send("POST", "/runs/wait", `{"assistant_id":"agent","input":${deep(10_000)}}`), /^input: nests deeper/);
    await expect422(send("POST", "/store/items/search", `{"filter":${deep(10_000)}}`), /^filter: nests deeper/);
    expect(await threadCount()).toBe(before);
    // Ordinary nesting still goes through.
    expect((await send("POST", "/threads", `{"metadata":${deep(50)}}`)).status).toBe(200);
  });

  it("bounds store keys and namespaces to 1 KiB, reads included", async () => {
    const big = "k".repeat(1024 * 1024);
    await expect422(send("PUT", "/store/items", JSON.stringify({ namespace: ["n"], key: big, value: {} })), /^key: must be at most 1024 bytes/);
    await expect422(send("PUT", "/store/items", JSON.stringify({ namespace: [big], key: "k", value: {} })), /^namespace: must be at most 1024 bytes/);
    await expect422(send("DELETE", "/store/items", JSON.stringify({ namespace: ["n"], key: big })), /^key: /);
    await expect422(send("GET", `/store/items?key=${"k".repeat(2000)}&namespace=n`), /key: must be at most 1024 bytes/);
    expect(JSON.parse((await send("POST", "/store/items/search", '{"namespace_prefix":["n"]}')).text).items).toEqual([]);
    // The largest key and namespace are stored and read back.
    const key = "é".repeat(512);
    const namespace = ["n", "x".repeat(1021)];
    expect((await send("PUT", "/store/items", JSON.stringify({ namespace, key, value: { ok: true } }))).status).toBe(204);
    const item = await t.client.store.getItem(namespace, key);
    expect(item?.value).toEqual({ ok: true });
  });

  it("answers 422 for a state update at a checkpoint namespace the graph does not have, and changes nothing", async () => {
    const thread = await t.client.threads.create({ graphId: "agent" });
    await t.client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "user", content: "hi" }] } });
    const history = await t.client.threads.getHistory(thread.thread_id);
    const body = JSON.stringify({ values: { messages: [] }, checkpoint: { checkpoint_ns: "no-such-subgraph" } });
    await expect422(send("POST", `/threads/${thread.thread_id}/state`, body), /^checkpoint\.checkpoint_ns: names no subgraph/);
    expect(await t.client.threads.getHistory(thread.thread_id)).toEqual(history);
  });

  it("cuts what an error body echoes of the request", async () => {
    const graphId = "g".repeat(1024 * 1024);
    const response = await send("POST", "/assistants", JSON.stringify({ graph_id: graphId }));
    expect(response.status).toBe(404);
    expect(response.text.length).toBeLessThan(1000);
    expect(response.detail).toMatch(/^Graph "g{200}…" not found/);
    const unknown = await send("GET", `/no/such/route/${"a".repeat(10_000)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.text.length).toBeLessThan(1000);
    expect(unknown.detail).toMatch(/^Not Found: GET \/no\/such\/route\/a+…$/);
  });
});
