import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startControlPlane, type ControlPlaneProcess } from "../support/control-plane-process.ts";

/**
 * A control plane that cannot sandbox deployments (here: SLIPWAY_SANDBOX=off, as on a
 * machine without bubblewrap) says so at start, and refuses to serve a second
 * organization unless the operator accepts the risk (docs/security.md, Isolation).
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const UNSANDBOXED = { SLIPWAY_SANDBOX: "off", SLIPWAY_DATABASE_URL: undefined };

describe("slipway up without a sandbox", () => {
  let dir: string;
  let cp: ControlPlaneProcess | undefined;

  afterEach(async () => {
    await cp?.kill();
    cp = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it("says so, refuses a second organization, and serves it with --allow-unsandboxed", async () => {
    dir = mkdtempSync(join(tmpdir(), "slipway-unsandboxed-"));
    const dataDir = join(dir, "data");
    cp = await startControlPlane(["--data-dir", dataDir], UNSANDBOXED);
    expect(cp.output()).toMatch(/"event":"isolation","runtime":"local","sandbox":"none".*"reason":"SLIPWAY_SANDBOX=off"/);
    await cp.kill();
    cp = undefined;

    const admin = await promisify(execFile)(
      process.execPath,
      ["bin/slipway.js", "admin", "bootstrap", "--data-dir", dataDir, "--org-name", "Second", "--json"],
      {
        cwd: ROOT,
        env: { ...process.env, SLIPWAY_DATABASE_URL: "" },
      },
    );
    expect(admin.stdout).toContain("organization_id");

    const refused = await startControlPlane(["--data-dir", dataDir], UNSANDBOXED).then(
      (started) => {
        cp = started;
        return "started";
      },
      (error: Error) => error.message,
    );
    expect(refused).toContain("deployments cannot be sandboxed here (SLIPWAY_SANDBOX=off) and this control plane has 2 organizations");
    expect(refused).toContain("--allow-unsandboxed");

    cp = await startControlPlane(["--data-dir", dataDir, "--allow-unsandboxed"], UNSANDBOXED);
    expect(cp.output()).toContain('"event":"listening"');
  }, 400_000);
});
