import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import type { ControlPlaneProcess } from "../support/control-plane-process.ts";
import { authorizationOf, startCanary, type Canary, type CanaryHit } from "../support/loopback-canary.ts";
import { api, type Api } from "./api.ts";
import { startPipelineControlPlane } from "./control-plane.ts";

/**
 * Issue #31, items 1 to 3, as the campaign found them: the real `slipway up` allows
 * `127.0.0.2` as a private git host, a listener on `127.0.0.1` (and `[::1]`) stands for an
 * internal service, and an integration whose base URL is `http://127.0.0.2:<A>/` holds a
 * token. On main, `http://127.0.0.2:<A>\@127.0.0.1:<Q>/x.git` was accepted (the guard read
 * host 127.0.0.2) and git sent the token to 127.0.0.1:<Q>; and a repository on another
 * port of 127.0.0.2 got the token too.
 */
const TOKEN = "integration-token-31";
const BASIC = `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString("base64")}`;

describe.each(BACKENDS)("repo_url and the address guard on %s", (backend) => {
  let root: string;
  let cp: ControlPlaneProcess;
  let cpApi: Api;
  const hits: CanaryHit[] = [];
  let canaries: Canary[] = [];
  let internal4: Canary;
  let internal6: Canary;
  let origin: Canary;
  let otherPort: Canary;
  let integrationId: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "slipway-url-guard-"));
    internal4 = await startCanary("127.0.0.1", 0, hits);
    internal6 = await startCanary("::1", 0, hits);
    origin = await startCanary("127.0.0.2", 0, hits);
    otherPort = await startCanary("127.0.0.2", 0, hits);
    canaries = [internal4, internal6, origin, otherPort];
    cp = await startPipelineControlPlane(root, { backend, env: { SLIPWAY_GIT_ALLOW_HOSTS: "127.0.0.2" } });
    cpApi = api(cp);
    const installed = await cpApi.call("POST", "/v1/integrations/github/install", { name: "forge", base_url: `http://${origin.hostPort}/`, token: TOKEN });
    expect(installed.status).toBe(201);
    integrationId = installed.body.id;
  }, 120_000);

  afterAll(async () => {
    await cp?.kill("SIGTERM");
    await Promise.all(canaries.map((c) => c.close()));
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const deployment = (name: string, repo_url: string) => ({
    name,
    source: "github",
    source_config: { repo_url, integration_id: integrationId, deployment_type: "dev", build_on_push: false },
    source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
  });
  const count = async () => (await cpApi.call("GET", "/v2/deployments?limit=100")).body.resources.length as number;

  async function expectRefused(urls: string[]) {
    const before = await count();
    hits.length = 0;
    for (const repo_url of urls) {
      const res = await cpApi.call("POST", "/v2/deployments", deployment(`refused-${before}`, repo_url));
      expect(res.status, repo_url).toBe(422);
      expect(res.body.detail[0].loc, repo_url).toEqual(["body", "source_config", "repo_url"]);
      expect(res.body.detail[0].msg, repo_url).toMatch(/'\\'/);
    }
    // Nothing stored, so no revision: nothing can reach any listener later either.
    expect(await count()).toBe(before);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(hits).toEqual([]);
  }

  it("item 1: refuses the backslash spellings that git reads as user info (422, nothing stored, nothing reached)", async () => {
    await expectRefused([
      `http://${origin.hostPort}\\@${internal4.hostPort}/x.git`,
      `http://${origin.hostPort}\\\\@${internal4.hostPort}/x.git`,
      `http://${origin.hostPort}\\@${internal6.hostPort}/x.git`,
    ]);
  });

  it("item 3: refuses them for https, git and ssh too", async () => {
    await expectRefused(
      ["https", "git", "ssh"].flatMap((scheme) => [
        `${scheme}://${origin.hostPort}\\@${internal4.hostPort}/x.git`,
        `${scheme}://${origin.hostPort}\\\\@${internal4.hostPort}/x.git`,
        `${scheme}://${origin.hostPort}\\@${internal6.hostPort}/x.git`,
      ]),
    );
  });

  it("refuses them in a patch with 422 at the field, changing nothing", async () => {
    const created = await cpApi.call("POST", "/v2/deployments", deployment("patched", `http://${origin.hostPort}/x.git`));
    expect(created.status).toBe(201);
    await cpApi.waitForRevision(created.body.id, created.body.latest_revision_id);
    const res = await cpApi.call("PATCH", `/v2/deployments/${created.body.id}`, {
      source_config: { repo_url: `http://${origin.hostPort}\\@${internal4.hostPort}/x.git` },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(["body", "source_config", "repo_url"]);
    const after = (await cpApi.call("GET", `/v2/deployments/${created.body.id}`)).body;
    expect(after.source_config.repo_url).toBe(`http://${origin.hostPort}/x.git`);
    expect(after.latest_revision_id).toBe(created.body.latest_revision_id);
  });

  it("item 2: sends the integration's token to its own origin only, not to another port of its host", async () => {
    const fetchOf = async (name: string, repo_url: string) => {
      hits.length = 0;
      const created = await cpApi.call("POST", "/v2/deployments", deployment(name, repo_url));
      expect(created.status, repo_url).toBe(201);
      const revision = await cpApi.waitForRevision(created.body.id, created.body.latest_revision_id);
      // The listeners hang up: the fetch fails, after git has shown where it went.
      expect(revision.status).toBe("CREATE_FAILED");
      return { seen: [...hits], log: await cpApi.logs(created.body.id, created.body.latest_revision_id, "build") };
    };
    const own = await fetchOf("own-origin", `http://${origin.hostPort}/x.git`);
    expect(own.seen.map((h) => h.listener)).toEqual([origin.hostPort]);
    expect(authorizationOf(own.seen[0].head)).toBe(BASIC);

    const other = await fetchOf("other-port", `http://${otherPort.hostPort}/x.git`);
    expect(other.seen.map((h) => h.listener)).toEqual([otherPort.hostPort]);
    expect(authorizationOf(other.seen[0].head)).toBeUndefined();
    expect(other.log.join("\n")).toContain(`The integration's token is not sent: it belongs to http://${origin.hostPort}`);
  });
});
