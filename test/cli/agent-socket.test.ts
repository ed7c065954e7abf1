import { spawn } from "node:child_process";
import { createServer, type AddressInfo } from "node:net";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSlipway } from "../support/agent-process.ts";
import { FIXTURE_CONFIG } from "../support/agent-server.ts";
import { callSocket } from "../pipeline/agent-socket.ts";

const BIN = fileURLToPath(new URL("../../bin/slipway.js", import.meta.url));

/** `slipway agent --socket <path>`: the API on a Unix socket, as the control plane runs its agent processes. */
describe("slipway agent --socket", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "slipway-agent-socket-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("serves the API on the socket, says so in its listening line, and removes the socket when it stops", async () => {
    const socket = join(dir, "a.sock");
    const child = spawn(
      process.execPath,
      [BIN, "agent", "--config", FIXTURE_CONFIG, "--socket", socket, "--data-dir", join(dir, "db"), "--api-key", "the-key"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on("line", (line) => {
        if (line.includes('"listening"')) resolve(JSON.parse(line));
      });
      child.once("exit", (code) => reject(new Error(`agent exited with ${code}: ${stderr}`)));
    });
    try {
      expect(listening).toMatchObject({ event: "listening", socket, base_path: "", url: `http+unix://${encodeURIComponent(socket)}` });
      expect((await callSocket(socket, "/ok")).status).toBe(200);
      expect((await callSocket(socket, "/threads/search", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(401);
      const searched = await callSocket(socket, "/threads/search", {
        method: "POST",
        headers: { "x-api-key": "the-key", "content-type": "application/json" },
        body: "{}",
      });
      expect(searched.status).toBe(200);
      expect(JSON.parse(searched.body)).toEqual([]);
    } finally {
      await new Promise((resolve) => {
        child.once("exit", resolve);
        child.kill("SIGTERM");
      });
    }
    expect(existsSync(socket)).toBe(false);
  }, 60_000);

  it("refuses a port already taken at once, creating nothing", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen({ host: "127.0.0.1", port: 0 }, resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      const dataDir = join(dir, "never-made");
      const refused = await runSlipway(["agent", "--config", FIXTURE_CONFIG, "--port", String(port), "--data-dir", dataDir]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`slipway agent: port ${port} on 127.0.0.1 is already in use`);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      holder.close();
    }
  }, 60_000);

  it("refuses --socket with --port, and a path already taken, with a clear message", async () => {
    const both = await runSlipway(["agent", "--config", FIXTURE_CONFIG, "--socket", join(dir, "b.sock"), "--port", "0"]);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain("--socket excludes --host and --port");
    const taken = join(dir, "taken.sock");
    writeFileSync(taken, "");
    const inUse = await runSlipway(["agent", "--config", FIXTURE_CONFIG, "--socket", taken, "--data-dir", join(dir, "db2")]);
    expect(inUse.code).toBe(1);
    expect(inUse.stderr).toContain(`${taken} is in use`);
  }, 60_000);
});
