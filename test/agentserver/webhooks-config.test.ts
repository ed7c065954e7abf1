import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentServer } from "../../src/agentserver/server.ts";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";
import { startWebhookReceiver } from "../support/webhook-receiver.ts";

const GRAPHS = fileURLToPath(new URL("../fixtures/agents/src/graphs.ts", import.meta.url));
/** `${{ env.NAME }}`, the template langgraph.json header values use. */
const envRef = (name: string) => `$\{{ env.${name} }}`;
const INPUT = { input: { messages: [{ role: "human", content: "hook" }] } };

/** langgraph.json's `webhooks`: the project's URL rules for run and cron webhooks, and the headers sent with them. */
describe("langgraph.json webhooks", () => {
  let dir: string;
  let t: TestAgentServer;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "slipway-webhooks-config-"));
    hooks = await startWebhookReceiver();
    const port = Number(new URL(hooks.url).port);
    const webhooks = {
      env_prefix: "HOOKTEST_",
      url: { allowed_domains: ["127.0.0.1", "*.hooks.example.com"], allowed_ports: [port, 443], max_url_length: 200, disable_loopback: true },
      headers: { Authorization: `Bearer ${envRef("HOOKTEST_TOKEN")}`, "X-Static": "plain" },
    };
    writeFileSync(join(dir, "langgraph.json"), JSON.stringify({ graphs: { agent: `${GRAPHS}:agent` }, webhooks }));
    process.env.HOOKTEST_TOKEN = "t0ken";
    t = await startTestAgentServer("pglite", { configPath: join(dir, "langgraph.json"), webhookAllowHosts: ["127.0.0.1"] });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await hooks?.close();
    delete process.env.HOOKTEST_TOKEN;
    rmSync(dir, { recursive: true, force: true });
  });

  it("sends the project's headers, with their environment variables filled in", async () => {
    const thread = await t.client.threads.create();
    const run = await t.client.runs.create(thread.thread_id, "agent", { ...INPUT, webhook: hooks.url });
    await t.client.runs.join(thread.thread_id, run.run_id);
    await expect.poll(() => hooks.headers.length).toBe(1);
    expect(hooks.headers[0].authorization).toBe("Bearer t0ken");
    expect(hooks.headers[0]["x-static"]).toBe("plain");
    expect(hooks.headers[0]["content-type"]).toBe("application/json");
    expect(hooks.received[0].run_id).toBe(run.run_id);
  });

  it("refuses, with 422 naming the rule, a webhook outside the project's rules, for runs and crons alike", async () => {
    const thread = await t.client.threads.create();
    const refused = async (path: string, webhook: string) => {
      const response = await fetch(`${t.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "agent", ...INPUT, webhook, ...(path.includes("crons") ? { schedule: "0 0 * * *" } : {}) }),
      });
      expect(response.status, webhook).toBe(422);
      return JSON.stringify(await response.json());
    };
    expect(await refused(`/threads/${thread.thread_id}/runs`, "https://other.example.org/hook")).toMatch(/allowed_domains/);
    expect(await refused(`/threads/${thread.thread_id}/runs`, "https://hooks.example.com/hook")).toMatch(/allowed_domains/);
    expect(await refused(`/threads/${thread.thread_id}/runs`, "https://a.hooks.example.com:8443/hook")).toMatch(/allowed_ports/);
    expect(await refused(`/threads/${thread.thread_id}/runs`, `https://a.hooks.example.com/${"x".repeat(200)}`)).toMatch(/max_url_length/);
    expect(await refused(`/threads/${thread.thread_id}/runs`, "/my-route")).toMatch(/disable_loopback/);
    expect(await refused("/runs/crons", "https://other.example.org/hook")).toMatch(/allowed_domains/);
    expect(await t.client.runs.list(thread.thread_id)).toEqual([]);
    const accepted = await t.client.runs.create(thread.thread_id, "agent", { ...INPUT, webhook: "https://a.hooks.example.com/hook" });
    expect(accepted.run_id).toBeTruthy();
  });
});

describe("langgraph.json webhooks refused at start", () => {
  const start = async (config: Record<string, unknown>) => {
    const dir = mkdtempSync(join(tmpdir(), "slipway-webhooks-bad-"));
    writeFileSync(join(dir, "langgraph.json"), JSON.stringify({ graphs: { agent: `${GRAPHS}:agent` }, ...config }));
    try {
      const server = await startAgentServer({
        configPath: join(dir, "langgraph.json"),
        port: 0,
        host: "127.0.0.1",
        dataDir: join(dir, "db"),
        logLevel: "silent",
      });
      await server.close();
      return "started";
    } catch (error) {
      return (error as Error).message;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it("names the header whose variable is not set, or is outside env_prefix", async () => {
    expect(await start({ webhooks: { headers: { "X-Token": envRef("LG_WEBHOOK_MISSING_ONE") } } })).toMatch(
      /webhooks\.headers\.X-Token: environment variable LG_WEBHOOK_MISSING_ONE is not set/,
    );
    expect(await start({ webhooks: { headers: { "X-Token": envRef("DATABASE_URL") } } })).toMatch(/webhooks\.headers\.X-Token: names env\.DATABASE_URL/);
    expect(await start({ webhooks: { url: { require_https: "yes" } } })).toMatch(/webhooks\.url\.require_https: must be true or false/);
    expect(await start({ webhooks: { url: { allowed_domains: ["https://x.com"] } } })).toMatch(/webhooks\.url\.allowed_domains/);
    expect(await start({ webhooks: { retries: 3 } })).toMatch(/webhooks\.retries: unknown key/);
    expect(await start({ webhooks: { headers: { "Content-Type": "text/plain" } } })).toMatch(/webhooks\.headers\.Content-Type: is set by the server/);
  });

  it("refuses langgraph.json's encryption, which is not built", async () => {
    expect(await start({ encryption: { path: "./encryption.py:encryption" } })).toMatch(/encryption: custom encryption .* is not supported yet/);
  });

  it("require_https refuses http webhooks", async () => {
    const dir = mkdtempSync(join(tmpdir(), "slipway-webhooks-https-"));
    writeFileSync(join(dir, "langgraph.json"), JSON.stringify({ graphs: { agent: `${GRAPHS}:agent` }, webhooks: { url: { require_https: true } } }));
    const t = await startTestAgentServer("pglite", { configPath: join(dir, "langgraph.json") });
    try {
      const thread = await t.client.threads.create();
      const response = await fetch(`${t.url}/threads/${thread.thread_id}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "agent", ...INPUT, webhook: "http://hooks.example.com/x" }),
      });
      expect(response.status).toBe(422);
      expect((await response.json()).detail).toMatch(/require_https/);
    } finally {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
