import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveControlPlaneConfig } from "../../src/config/controlplane.ts";
import { startControlPlane, type ControlPlaneProcess } from "../support/control-plane-process.ts";

/** The operator's allow-list of private git hosts: `--allow-private-git-hosts` / SLIPWAY_GIT_ALLOW_HOSTS. */
describe("private git hosts setting", () => {
  it("comes from the flag, else the environment, else is empty; a URL or CIDR stops start-up", () => {
    expect(resolveControlPlaneConfig({}, {}).gitHosts.allowHosts).toEqual([]);
    expect(resolveControlPlaneConfig({}, { SLIPWAY_GIT_ALLOW_HOSTS: "git.internal, 127.0.0.1 ,[::1]" }).gitHosts.allowHosts).toEqual([
      "git.internal",
      "127.0.0.1",
      "[::1]",
    ]);
    expect(resolveControlPlaneConfig({ allowPrivateGitHosts: "10.0.0.5" }, { SLIPWAY_GIT_ALLOW_HOSTS: "git.internal" }).gitHosts.allowHosts).toEqual([
      "10.0.0.5",
    ]);
    expect(() => resolveControlPlaneConfig({ allowPrivateGitHosts: "http://git.internal/" }, {})).toThrow(
      /--allow-private-git-hosts.*'http:\/\/git\.internal\/' is not a host name/,
    );
    expect(() => resolveControlPlaneConfig({}, { SLIPWAY_GIT_ALLOW_HOSTS: "10.0.0.0/8" })).toThrow(/is not a host name or an IP address/);
  });

  describe("slipway up --allow-private-git-hosts 127.0.0.1", () => {
    let root: string;
    let cp: ControlPlaneProcess;
    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), "slipway-git-hosts-"));
      cp = await startControlPlane(["--data-dir", join(root, "data"), "--allow-private-git-hosts", "127.0.0.1", "--no-rate-limit"], {
        SLIPWAY_DATABASE_URL: undefined,
        SLIPWAY_SECRETS_KEY: undefined,
        SLIPWAY_GIT_ALLOW_HOSTS: undefined,
      });
    }, 120_000);
    afterAll(async () => {
      await cp?.kill("SIGTERM");
      if (root) rmSync(root, { recursive: true, force: true });
    });

    const install = (name: string, base_url: string) =>
      fetch(`${cp.url}/v1/integrations/github/install`, {
        method: "POST",
        headers: { "x-api-key": cp.apiKey!, "x-tenant-id": cp.workspaceId!, "content-type": "application/json" },
        body: JSON.stringify({ name, base_url }),
      });

    it("accepts the allowed loopback host and still refuses the others", async () => {
      expect((await install("allowed", "http://127.0.0.1:3000/")).status).toBe(201);
      // Allowed, but in a spelling readers disagree on: the canonical URL rule (decision 0032) refuses it.
      const decimal = await install("allowed-decimal", "http://2130706433:3000/");
      expect(decimal.status).toBe(422);
      expect(((await decimal.json()) as { detail: { msg: string }[] }).detail[0].msg).toBe("base_url's host must spell the address as 127.0.0.1");
      const refused = await install("not-allowed", "http://127.0.0.2:3000/");
      expect(refused.status).toBe(422);
      const [problem] = ((await refused.json()) as { detail: { loc: string[]; msg: string }[] }).detail;
      expect(problem.loc).toEqual(["body", "base_url"]);
      expect(problem.msg).toMatch(
        /address 127\.0\.0\.2 is refused: it is loopback.*add 127\.0\.0\.2 to --allow-private-git-hosts \(or SLIPWAY_GIT_ALLOW_HOSTS\)/,
      );
      expect((await install("metadata", "http://169.254.169.254/")).status).toBe(422);
    });
  });
});
