import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";

const human = (content: string) => ({ messages: [{ role: "human", content }] });

/**
 * Issue #16, security point 2: run webhooks to loopback, private, link-local and metadata
 * addresses are refused in every spelling (IPv4 inside IPv6 included), and a name that
 * resolves to one gets nothing. Not a storage suite: one back end is enough.
 */
describe("run webhooks through the address guard", () => {
  let t: TestAgentServer;
  let hooks: Server;
  let port = 0;
  const received: string[] = [];

  beforeAll(async () => {
    hooks = createServer((req, res) => {
      received.push(`${req.method} ${req.url}`);
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    await new Promise<void>((resolve) => hooks.listen(0, "127.0.0.1", resolve));
    port = (hooks.address() as { port: number }).port;
    t = await startTestAgentServer("pglite"); // no --webhook-allow: the default
  });
  afterAll(async () => {
    await t?.close();
    hooks?.closeAllConnections();
    await new Promise((resolve) => hooks?.close(resolve));
  });

  const createRun = (threadId: string, webhook: string) =>
    fetch(`${t.url}/threads/${threadId}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "agent", input: human("hook"), webhook }),
    });

  it("refuses IPv4-mapped and other embedded loopback or metadata addresses at creation (422)", async () => {
    const thread = await t.client.threads.create();
    const spellings = [
      `http://[::ffff:127.0.0.1]:${port}/hook`,
      `http://[::ffff:7f00:1]:${port}/hook`,
      `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/hook`,
      "http://[::ffff:169.254.169.254]/latest/meta-data/",
      `http://[::127.0.0.1]:${port}/hook`,
      "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/",
      `http://[2002:7f00:1::1]:${port}/hook`,
      "http://[fec0::1]/hook",
      `http://2130706433:${port}/hook`,
      `http://0x7f000001:${port}/hook`,
      `http://127.0.0.2:${port}/hook`,
      `http://0.0.0.0:${port}/hook`,
      "http://198.18.0.1/hook",
      "http://100.64.0.1/hook",
    ];
    for (const webhook of spellings) {
      const response = await createRun(thread.thread_id, webhook);
      expect(response.status, webhook).toBe(422);
      const detail = JSON.stringify(await response.json());
      expect(detail, webhook).toMatch(/webhook/);
      expect(detail, webhook).toMatch(/--webhook-allow/);
    }
    expect(await t.client.runs.list(thread.thread_id)).toEqual([]);
    expect(received).toEqual([]);
  });

  it("sends nothing to a name that resolves to loopback", async () => {
    // "localhost." passes the creation check (it is a name); it resolves to 127.0.0.1 when sent.
    const thread = await t.client.threads.create();
    const response = await createRun(thread.thread_id, `http://localhost.:${port}/by-name`);
    expect(response.status).toBe(200);
    const run = (await response.json()) as { run_id: string };
    await t.client.runs.join(thread.thread_id, run.run_id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received.filter((line) => line.endsWith("/by-name"))).toEqual([]);
  });
});
