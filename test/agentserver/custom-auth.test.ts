import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTE_GUARDS } from "../../src/agentserver/custom-auth/route-guards.ts";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { BACKENDS, freshBackend } from "../support/backends.ts";

/**
 * langgraph.json `auth.path`: the fixture's Auth gives each user only what they created
 * (metadata.owner), refuses mallory's deletes and keeps store items under the user's own
 * namespace. Driven through the official SDK with one token per user, and with raw
 * requests for the vendor's published bypasses.
 */
const CONFIG = fileURLToPath(new URL("../fixtures/custom-auth/langgraph.json", import.meta.url));

describe.each(BACKENDS)("custom auth (auth.path) on %s", (backend) => {
  let server: RunningAgentServer;
  const as = (token: string) => new Client({ apiUrl: server.url, defaultHeaders: { authorization: `Bearer ${token}` } });
  const raw = (path: string, init: RequestInit & { token?: string } = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: {
        "content-type": "application/json",
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
        ...(init.headers as Record<string, string>),
      },
    });
  const status = (promise: Promise<unknown>) =>
    promise.then(
      () => 200,
      (error: { status?: number }) => error.status,
    );

  beforeAll(async () => {
    const target = freshBackend(backend, "auth");
    server = await startAgentServer({
      configPath: CONFIG,
      port: 0,
      host: "127.0.0.1",
      dataDir: target.dataDir,
      databaseUrl: target.databaseUrl,
      schema: target.schema,
      logLevel: "error",
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("answers 401 without a valid token, and leaves health and info open", async () => {
    const none = await raw("/threads/search", { method: "POST", body: "{}" });
    expect(none.status).toBe(401);
    expect((await none.json()).detail).toBe("No token provided");
    expect((await raw("/threads/search", { method: "POST", body: "{}", token: "forged" })).status).toBe(401);
    expect(await status(as("forged").threads.create())).toBe(401);
    // An HTTPException keeps its status, message and headers.
    const expired = await raw("/threads/search", { method: "POST", body: "{}", token: "token-expired" });
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    expect((await expired.json()).detail).toBe("Token expired");
    expect((await raw("/ok")).status).toBe(200);
    expect((await raw("/info")).status).toBe(200);
  });

  it("names in its rules only routes the server serves", async () => {
    for (const key of Object.keys(ROUTE_GUARDS)) {
      const [method, url] = key.split(" ") as [string, string];
      expect(server.app.hasRoute({ method: method as "GET", url }), key).toBe(true);
    }
  });

  it("does not take x-auth-scheme: langsmith as LangGraph Studio's user (the vendor's bypass)", async () => {
    const studio = await raw("/threads/search", { method: "POST", body: "{}", headers: { "x-auth-scheme": "langsmith" } });
    expect(studio.status).toBe(401);
  });

  it("gives each user only their own threads", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    const mine = await alice.threads.create({ metadata: { topic: "a" } });
    const theirs = await bob.threads.create({ metadata: { topic: "b" } });
    // The handler wrote the owner into the metadata the thread was created with.
    expect(mine.metadata).toMatchObject({ owner: "alice", topic: "a" });

    const aliceSees = (await alice.threads.search({ limit: 100 })).map((t) => t.thread_id);
    expect(aliceSees).toContain(mine.thread_id);
    expect(aliceSees).not.toContain(theirs.thread_id);
    // Asking for someone else's owner in the search's own filter finds nothing.
    expect(await bob.threads.search({ metadata: { owner: "alice" } })).toEqual([]);
    expect(await bob.threads.count({ metadata: { owner: "alice" } })).toBe(0);
    // Nor does asking by id.
    expect(await bob.threads.search({ ids: [mine.thread_id] } as never)).toEqual([]);

    expect(await status(bob.threads.get(mine.thread_id))).toBe(404);
    expect(await status(bob.threads.update(mine.thread_id, { metadata: { owner: "bob" } }))).toBe(404);
    expect(await status(bob.threads.getState(mine.thread_id))).toBe(404);
    expect(await status(bob.threads.getHistory(mine.thread_id))).toBe(404);
    expect(await status(bob.threads.copy(mine.thread_id))).toBe(404);
    expect(await status(bob.threads.delete(mine.thread_id))).toBe(404);
    expect(await status(bob.runs.create(mine.thread_id, "agent", { input: { messages: [] } }))).toBe(404);
    // Taking over a thread by creating it again under its id.
    expect(await status(bob.threads.create({ threadId: mine.thread_id, ifExists: "do_nothing" }))).toBe(409);

    expect((await alice.threads.get(mine.thread_id)).metadata).toMatchObject({ owner: "alice" });
  });

  it("keeps runs on their thread's owner, and hands the run the user", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    const thread = await alice.threads.create();
    const values = (await alice.runs.wait(thread.thread_id, "whoami", { input: {} })) as { user?: string };
    expect(values.user).toBe("alice");
    const [run] = await alice.runs.list(thread.thread_id);
    expect(run).toBeDefined();
    expect(await status(bob.runs.list(thread.thread_id))).toBe(404);
    expect(await status(bob.runs.get(thread.thread_id, run!.run_id))).toBe(404);
    expect(await status(bob.runs.join(thread.thread_id, run!.run_id))).toBe(404);
    // A run that creates its thread gives it an owner, as creating the thread would.
    const fresh = crypto.randomUUID();
    await alice.runs.wait(fresh, "whoami", { input: {}, ifNotExists: "create" });
    expect((await alice.threads.get(fresh)).metadata).toMatchObject({ owner: "alice" });
    expect(await status(bob.threads.get(fresh))).toBe(404);
    // Someone else's thread id with if_not_exists: still not theirs.
    expect(await status(bob.runs.wait(fresh, "whoami", { input: {}, ifNotExists: "create" }))).toBe(404);
    // A stateless run's thread carries the run's metadata, so its creator can read it back.
    const stateless = await alice.runs.create(null, "whoami", { input: {}, onCompletion: "keep" as never }); // the SDK types the values as "complete" | "continue"; the API takes "keep" | "delete"
    expect((await raw(`/runs/${stateless.run_id}`, { token: "token-alice" })).status).toBe(200);
    expect((await raw(`/runs/${stateless.run_id}`, { token: "token-bob" })).status).toBe(404);
    const cancel = await raw("/runs/cancel", { method: "POST", token: "token-bob", body: JSON.stringify({ run_ids: [run!.run_id] }) });
    expect(cancel.status).toBe(404);
  });

  it("scopes crons to their creator, and gives their runs the creator's identity", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    const cron = await alice.crons.create("whoami", { schedule: "0 3 1 1 *" });
    const read = (token: string) => raw(`/runs/crons/${cron.cron_id}`, { token });
    const mine = await read("token-alice");
    expect(mine.status).toBe(200);
    const body = (await mine.json()) as { metadata: Record<string, unknown>; payload: { config?: { configurable?: Record<string, unknown> } } };
    expect(body.metadata).toMatchObject({ owner: "alice" });
    expect(body.payload.config?.configurable?.langgraph_auth_user_id).toBe("alice");
    // As on the vendor's server, `user_id` is the identity unless the caller set one.
    expect(body.payload.config?.configurable?.user_id).toBe("alice");
    expect((await alice.crons.search()).map((c) => c.cron_id)).toContain(cron.cron_id);
    expect((await bob.crons.search()).map((c) => c.cron_id)).not.toContain(cron.cron_id);
    expect(await bob.crons.count()).toBe(0);
    expect((await read("token-bob")).status).toBe(404);
    expect((await raw(`/runs/crons/${cron.cron_id}`, { method: "PATCH", token: "token-bob", body: JSON.stringify({ enabled: false }) })).status).toBe(404);
    expect(await status(bob.crons.delete(cron.cron_id))).toBe(404);
    expect((await read("token-alice")).status).toBe(200);
    // A cron on someone else's thread would run there: refused as if the thread did not exist.
    const thread = await alice.threads.create();
    expect(await status(bob.crons.createForThread(thread.thread_id, "whoami", { schedule: "0 3 1 1 *" }))).toBe(404);
    await alice.crons.delete(cron.cron_id);
    expect((await read("token-alice")).status).toBe(404);
  });

  it("answers 403 when a handler refuses, and runs the create handler when copying", async () => {
    const mallory = as("token-mallory");
    const thread = await mallory.threads.create();
    expect(await status(mallory.threads.delete(thread.thread_id))).toBe(403);
    expect((await mallory.threads.get(thread.thread_id)).thread_id).toBe(thread.thread_id);
    const copy = await mallory.threads.copy(thread.thread_id);
    expect(copy.metadata).toMatchObject({ owner: "mallory" });
  });

  it("scopes assistants to their creator", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    const assistant = await alice.assistants.create({ graphId: "agent", name: "alice's" });
    expect(assistant.metadata).toMatchObject({ owner: "alice" });
    expect(await status(bob.assistants.get(assistant.assistant_id))).toBe(404);
    expect((await bob.assistants.search({ limit: 100 })).map((a) => a.assistant_id)).not.toContain(assistant.assistant_id);
    expect(await status(bob.assistants.update(assistant.assistant_id, { name: "mine now" }))).toBe(404);
    expect(await status(bob.assistants.delete(assistant.assistant_id))).toBe(404);
    expect((await alice.assistants.search({ limit: 100 })).map((a) => a.assistant_id)).toContain(assistant.assistant_id);
  });

  it("keeps store items under the user's namespace, and ranks them by meaning", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    await alice.store.putItem(["alice", "notes"], "pets", { text: "my cat sleeps on the sofa" });
    await alice.store.putItem(["alice", "notes"], "work", { text: "quarterly budget meeting on monday" });
    expect(await status(alice.store.putItem(["bob", "notes"], "x", { text: "planted" }))).toBe(403);
    expect(await status(bob.store.getItem(["alice", "notes"], "pets"))).toBe(403);
    expect(await status(bob.store.searchItems(["alice"]))).toBe(403);

    const found = await alice.store.searchItems(["alice", "notes"], { query: "cat sofa", limit: 2 });
    expect(found.items.map((item) => item.key)).toEqual(["pets", "work"]);
    expect(found.items[0]!.score).toBeGreaterThan(found.items[1]!.score ?? 0);
  });
});
