import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";
import { startWebhookReceiver } from "../support/webhook-receiver.ts";

const GRAPHS = fileURLToPath(new URL("../fixtures/agents/src/graphs.ts", import.meta.url));

/** langgraph.json's `http.disable_webhooks: true`: runs end without calling their webhook, as on the vendor's server. */
describe("http.disable_webhooks", () => {
  let dir: string;
  let t: TestAgentServer;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "slipway-no-webhooks-"));
    writeFileSync(join(dir, "langgraph.json"), JSON.stringify({ graphs: { agent: `${GRAPHS}:agent` }, http: { disable_webhooks: true } }));
    hooks = await startWebhookReceiver();
    t = await startTestAgentServer("pglite", { configPath: join(dir, "langgraph.json"), webhookAllowHosts: ["127.0.0.1"] });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await hooks?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("accepts a run's webhook and never calls it", async () => {
    const thread = await t.client.threads.create();
    const run = await t.client.runs.create(thread.thread_id, "agent", { input: { messages: [{ role: "human", content: "hook" }] }, webhook: hooks.url });
    expect((await t.client.runs.join(thread.thread_id, run.run_id)) as unknown).toBeTruthy();
    expect((await t.client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    // The same wait in which run-options.test.ts sees the call arrive.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(hooks.received).toEqual([]);
  });
});
