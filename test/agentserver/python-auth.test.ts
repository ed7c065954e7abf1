import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";

const PROJECT = fileURLToPath(new URL("../fixtures/python-auth/langgraph.json", import.meta.url));
const JS_GRAPHS_PROJECT = fileURLToPath(new URL("../fixtures/python-auth/langgraph.js-graphs.json", import.meta.url));

/**
 * `auth.path` naming a Python `langgraph_sdk.Auth` (`./auth.py:auth`), as the vendor's
 * Python server takes it: its handlers run in the Python worker, under the server's rules
 * of custom auth (decision 0015). The fixture gives each user only what they created,
 * refuses mallory's deletes and keeps store items under the user's own namespace.
 * One server and one worker for the file (embedded storage; the filters' SQL is the JS
 * suite's, on both back ends).
 */
describe("a Python auth.path (langgraph_sdk.Auth)", () => {
  let agent: TestAgentServer;
  const as = (token: string) => new Client({ apiUrl: agent.url, defaultHeaders: { authorization: `Bearer ${token}` } });
  const raw = (path: string, init: RequestInit & { token?: string } = {}) =>
    fetch(`${agent.url}${path}`, {
      ...init,
      headers: { "content-type": "application/json", ...(init.token ? { authorization: `Bearer ${init.token}` } : {}) },
    });
  const status = (promise: Promise<unknown>) =>
    promise.then(
      () => 200,
      (error: { status?: number }) => error.status,
    );

  beforeAll(async () => {
    process.env.SLIPWAY_PYTHON = inject("pythonPath");
    agent = await startTestAgentServer("pglite", { configPath: PROJECT });
  });
  afterAll(async () => agent?.close());

  it("answers 401 without a valid token, keeping an HTTPException's status, detail and headers", async () => {
    const none = await raw("/threads/search", { method: "POST", body: "{}" });
    expect(none.status).toBe(401);
    expect((await none.json()).detail).toBe("No token provided");
    expect(await status(as("forged").threads.create())).toBe(401);
    const expired = await raw("/threads/search", { method: "POST", body: "{}", token: "token-expired" });
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    expect((await expired.json()).detail).toBe("Token expired");
    expect((await raw("/ok")).status).toBe(200);
  });

  it("stamps the owner on a new thread and gives each user only their own", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    const mine = await alice.threads.create({ metadata: { topic: "a" } });
    const theirs = await bob.threads.create({ metadata: { topic: "b" } });
    expect(mine.metadata).toMatchObject({ owner: "alice", topic: "a" });
    expect(theirs.metadata).toMatchObject({ owner: "bob" });
    expect(await status(bob.threads.get(mine.thread_id))).toBe(404);
    expect(await status(bob.threads.getState(mine.thread_id))).toBe(404);
    const seenByBob = (await bob.threads.search({ limit: 100 })).map((t) => t.thread_id);
    expect(seenByBob).toContain(theirs.thread_id);
    expect(seenByBob).not.toContain(mine.thread_id);
    // A client's own filter narrows the handler's; it cannot widen it.
    expect(await bob.threads.search({ metadata: { owner: "alice" } })).toEqual([]);
  });

  it("lets a resource's action handler win over the global one: mallory's deletes are refused", async () => {
    const mallory = as("token-mallory");
    const thread = await mallory.threads.create();
    expect(await status(mallory.threads.delete(thread.thread_id))).toBe(403);
    expect((await mallory.threads.get(thread.thread_id)).thread_id).toBe(thread.thread_id);
    const alice = as("token-alice");
    const hers = await alice.threads.create();
    await alice.threads.delete(hers.thread_id);
    expect(await status(alice.threads.get(hers.thread_id))).toBe(404);
  });

  it("runs a graph with the user in its config, readable as the vendor gives it", async () => {
    const alice = as("token-alice");
    const thread = await alice.threads.create();
    expect(await alice.runs.wait(thread.thread_id, "whoami", { input: {} })).toEqual({ identity: "alice", org: "acme" });
    // Bob may not run on alice's thread.
    expect(await status(as("token-bob").runs.wait(thread.thread_id, "whoami", { input: {} }))).toBe(404);
  });

  it("keeps store items under the user's namespace: a handler's HTTPException is a 403", async () => {
    const alice = as("token-alice");
    await alice.store.putItem(["alice", "notes"], "n1", { text: "mine" });
    expect((await alice.store.getItem(["alice", "notes"], "n1"))?.value).toEqual({ text: "mine" });
    const refused = await raw("/store/items", { method: "PUT", token: "token-alice", body: JSON.stringify({ namespace: ["bob"], key: "k", value: {} }) });
    expect(refused.status).toBe(403);
    expect((await refused.json()).detail).toBe("Not your namespace");
  });

  it("answers the official Python SDK alike", async () => {
    const alice = await as("token-alice").threads.create({ metadata: { topic: "py" } });
    const script = `
import asyncio, json, sys
from langgraph_sdk import get_client
async def main(url, thread_id):
    bob = get_client(url=url, headers={"Authorization": "Bearer token-bob"})
    nobody = get_client(url=url, api_key=None)
    out = {"bob_sees_alice": any(t["thread_id"] == thread_id for t in await bob.threads.search(limit=100))}
    created = await bob.threads.create(metadata={"from": "python"})
    out["owner"] = created["metadata"].get("owner")
    try:
        await nobody.threads.search()
        out["anonymous"] = 200
    except Exception as error:
        out["anonymous"] = getattr(getattr(error, "response", None), "status_code", str(error))
    print(json.dumps(out))
asyncio.run(main(sys.argv[1], sys.argv[2]))
`;
    const { stdout } = await promisify(execFile)(inject("pythonPath"), ["-c", script, agent.url, alice.thread_id], { timeout: 60_000 });
    expect(JSON.parse(stdout)).toEqual({ bob_sees_alice: false, owner: "bob", anonymous: 401 });
  });
});

/**
 * A JS project whose only Python part is its auth (the vendor takes `auth.path` in Python
 * beside JS graphs): `slipway agent` starts the worker for the auth alone. Its build making
 * the environment is src/pipeline/builder/python-project.test.ts's.
 */
describe("a Python auth.path in a project of JS graphs", () => {
  let agent: TestAgentServer;
  const as = (token: string) => new Client({ apiUrl: agent.url, defaultHeaders: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    process.env.SLIPWAY_PYTHON = inject("pythonPath");
    agent = await startTestAgentServer("pglite", { configPath: JS_GRAPHS_PROJECT });
  });
  afterAll(async () => agent?.close());

  it("refuses a request without a token, stamps and filters by owner, and runs the JS graph for its user", async () => {
    const anonymous = await fetch(`${agent.url}/threads/search`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).detail).toBe("No token provided");
    const thread = await as("token-alice").threads.create();
    expect(thread.metadata).toMatchObject({ owner: "alice" });
    await expect(as("token-bob").threads.get(thread.thread_id)).rejects.toMatchObject({ status: 404 });
    expect(await as("token-alice").runs.wait(thread.thread_id, "echo", { input: { text: "hi" } })).toEqual({ text: "hi", reply: "js heard: hi" });
  });
});
