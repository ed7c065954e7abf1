import { existsSync, mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveControlPlaneConfig } from "../../src/config/controlplane.ts";
import { runSlipway } from "../support/agent-process.ts";

/** `slipway up` as a new user meets it: its help, and a port already taken. */
const env: Record<string, string | undefined> = {};
for (const name of ["SLIPWAY_DATABASE_URL", "SLIPWAY_SECRETS_KEY", "SLIPWAY_PORT", "SLIPWAY_HOST", "SLIPWAY_DATA_DIR", "SLIPWAY_REGION"]) env[name] = undefined;

describe("slipway up", () => {
  let busy: Server;
  let port: number;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    port = (busy.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => busy.close(resolve));
  });

  it("on a busy port fails before it creates an organization and prints its key", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "slipway-up-busy-")), "data");
    const run = await runSlipway(["up", "--json", "--host", "127.0.0.1", "--port", String(port), "--data-dir", dataDir], { env, timeoutMs: 60_000 });
    expect(run.stdout).not.toContain("api_key");
    expect(run.stdout).not.toContain("bootstrap");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`slipway up: port ${port} on 127.0.0.1 is already in use`);
    // Nothing was set up: no database, no secrets key.
    expect(existsSync(join(dataDir, "control-db"))).toBe(false);
    expect(existsSync(join(dataDir, "secrets.key"))).toBe(false);
  });

  it("--help shows each setting's default", async () => {
    const defaults = resolveControlPlaneConfig({}, {});
    const run = await runSlipway(["up", "--help"], { env });
    expect(run.code).toBe(0);
    const help = run.stdout.replace(/\s+/g, " ");
    expect(help).toContain(`(env SLIPWAY_PORT; default: ${defaults.port})`);
    expect(help).toContain(`(env SLIPWAY_HOST; default: ${defaults.host})`);
    expect(help).toContain("(env SLIPWAY_DATA_DIR; default: .slipway)");
    expect(help).toContain("(env SLIPWAY_DATABASE_URL; default: embedded)");
    expect(help).toContain(`(env SLIPWAY_REGION; default: ${defaults.region})`);
  });
});
