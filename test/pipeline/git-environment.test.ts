import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { startCanary, type Canary, type CanaryHit } from "../support/loopback-canary.ts";
import { api, type Api } from "./api.ts";
import { startPipelineControlPlane } from "./control-plane.ts";

/**
 * Issue #31, the setup of the server's own user: the real `slipway up` runs with a HOME
 * holding a `.netrc` (credentials for 127.0.0.1) and a `.gitconfig` that rewrites a URL
 * to another listener, in a working directory that is a git repository whose
 * `.git/config` rewrites a URL too, and with an ssh config whose ProxyCommand touches a
 * marker file. None of it may apply to the pipeline's git.
 *
 * ssh reads `~/.ssh/config` under the home of the password database (root's here), which
 * a test must not write: a stand-in `ssh` first on PATH passes the config with `-F`, as
 * ssh would read it itself (a later `-F /dev/null` overrides it, as it does the user's file).
 */
const NETRC_SECRET = "netrc-secret";

/** An HTTP server that asks for credentials (401) and records the Authorization of each request. */
async function startAuthAsker(): Promise<{ port: number; authorizations: (string | undefined)[]; close(): Promise<void> }> {
  const authorizations: (string | undefined)[] = [];
  const server: Server = createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    res.writeHead(401, { "www-authenticate": 'Basic realm="git"' });
    res.end("credentials required");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : 0,
    authorizations,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("git runs without the server user's git, curl and ssh setup", () => {
  let root: string;
  let cp: ControlPlaneProcess;
  let cpApi: Api;
  let asker: Awaited<ReturnType<typeof startAuthAsker>>;
  const hits: CanaryHit[] = [];
  const canaries: Record<string, Canary> = {};
  let marker: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-git-env-"));
    asker = await startAuthAsker();
    for (const name of ["cwdRepo", "cwdTarget", "homeRepo", "homeTarget", "ssh"]) canaries[name] = await startCanary("127.0.0.1", 0, hits);

    const home = join(root, "home");
    mkdirSync(home);
    writeFileSync(join(home, ".netrc"), `machine 127.0.0.1 login leak password ${NETRC_SECRET}\n`);
    chmodSync(join(home, ".netrc"), 0o600);
    writeFileSync(join(home, ".gitconfig"), `[url "http://${canaries.homeTarget.hostPort}/"]\n\tinsteadOf = http://${canaries.homeRepo.hostPort}/\n`);

    const cwd = join(root, "cwd");
    mkdirSync(cwd);
    execFileSync("git", ["init", "-q", cwd], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" } });
    writeFileSync(
      join(cwd, ".git", "config"),
      `[core]\n\trepositoryformatversion = 0\n\tbare = false\n[url "http://${canaries.cwdTarget.hostPort}/"]\n\tinsteadOf = http://${canaries.cwdRepo.hostPort}/\n`,
    );

    marker = join(root, "proxy-command-ran");
    const bin = join(root, "bin");
    mkdirSync(bin);
    writeFileSync(join(root, "ssh_config"), `Host *\n  ProxyCommand touch ${marker}\n`);
    const realSsh = execFileSync("sh", ["-c", "command -v ssh"], { encoding: "utf8" }).trim();
    writeFileSync(join(bin, "ssh"), `#!/bin/sh\nexec ${realSsh} -F ${join(root, "ssh_config")} "$@"\n`);
    chmodSync(join(bin, "ssh"), 0o755);

    cp = await startPipelineControlPlane(root, { cwd, env: { HOME: home, PATH: `${bin}:${process.env.PATH}` } });
    cpApi = api(cp);
  }, 120_000);

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    await asker?.close();
    await Promise.all(Object.values(canaries).map((c) => c.close()));
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** Deploys `repo_url` (no integration); the fetch fails: every listener here refuses or hangs up. */
  async function fetchOf(name: string, repo_url: string): Promise<CanaryHit[]> {
    hits.length = 0;
    const created = await cpApi.call("POST", "/v2/deployments", {
      name,
      source: "github",
      source_config: { repo_url, deployment_type: "dev", build_on_push: false },
      source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
    });
    expect(created.status, repo_url).toBe(201);
    const revision = await cpApi.waitForRevision(created.body.id, created.body.latest_revision_id);
    expect(revision.status).toBe("CREATE_FAILED");
    return [...hits];
  }

  it("does not answer a host's 401 with the credentials of HOME's .netrc", async () => {
    await fetchOf("netrc", `http://127.0.0.1:${asker.port}/x.git`);
    expect(asker.authorizations.length).toBeGreaterThan(0);
    expect(asker.authorizations).toEqual(asker.authorizations.map(() => undefined));
  });

  it("does not apply the .git/config of the control plane's working directory (ls-remote's url rewrite)", async () => {
    const seen = await fetchOf("cwd-config", `http://${canaries.cwdRepo.hostPort}/x.git`);
    expect(seen.map((h) => h.listener)).toEqual([canaries.cwdRepo.hostPort]);
  });

  it("does not apply HOME's .gitconfig (url rewrite)", async () => {
    const seen = await fetchOf("home-config", `http://${canaries.homeRepo.hostPort}/x.git`);
    expect(seen.map((h) => h.listener)).toEqual([canaries.homeRepo.hostPort]);
  });

  it("runs ssh without the user's ssh config (stand-in: a config passed by an ssh on PATH): its ProxyCommand does not run", async () => {
    const seen = await fetchOf("ssh-config", `ssh://git@${canaries.ssh.hostPort}/x.git`);
    expect(existsSync(marker)).toBe(false);
    expect(seen.map((h) => h.listener)).toEqual([canaries.ssh.hostPort]);
    expect(seen[0].head).toMatch(/^SSH-2\.0-/);
  });
});
