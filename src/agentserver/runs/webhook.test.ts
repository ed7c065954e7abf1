import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResolvedAddress } from "../../net/address-guard.ts";
import { checkWebhookUrl, sendWebhook, type WebhookPolicy } from "./webhook.ts";

const OPEN: WebhookPolicy = { allowHosts: [], onlyAllowed: false };

describe("webhooks", () => {
  let server: Server;
  let port = 0;
  const received: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        received.push(`${req.headers.host} ${body}`);
        res.end("ok");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("refuses IPv4-mapped loopback and metadata at creation, naming the setting that allows them", () => {
    for (const url of [
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[::ffff:7f00:1]:${port}/`,
      `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/`,
      "http://[::ffff:169.254.169.254]/",
    ]) {
      expect(() => checkWebhookUrl(url, OPEN), url).toThrow(/IPv4-mapped address of (127\.0\.0\.1|169\.254\.169\.254).*--webhook-allow/);
    }
  });

  it("does not deliver to an IPv4-mapped loopback address", async () => {
    await expect(sendWebhook(`http://[::ffff:7f00:1]:${port}/`, { run_id: "r" }, OPEN)).rejects.toThrow(/IPv4-mapped/);
    expect(received).toEqual([]);
  });

  it("delivers to the address it checked, even when DNS answers differently afterwards", async () => {
    // A rebinding resolver: an allowed address first, another one after.
    const answers: string[] = [];
    const resolve = async (): Promise<ResolvedAddress[]> => {
      const address = answers.length === 0 ? "127.0.0.1" : "10.255.255.1";
      answers.push(address);
      return [{ address, family: 4 }];
    };
    await sendWebhook(`http://hooks.example:${port}/run`, { run_id: "pinned" }, { allowHosts: ["127.0.0.1"], onlyAllowed: false, resolve });
    expect(answers).toEqual(["127.0.0.1"]);
    expect(received).toEqual([`hooks.example:${port} {"run_id":"pinned"}`]);
  });
});
