import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { githubDeployment, startControlPlane, type ControlPlaneFixture, type Tenant } from "./deployments-fixture.ts";

/**
 * Issue #16, security points 3 and 4: a deployment may only name an integration of its own
 * workspace, and git-looking fields that git could misread (options, other transports,
 * control characters, paths out of the repository) are refused with 422 before anything
 * is stored, at creation and at patch.
 */
describe.each(BACKENDS)("deployment source checks on %s", (backend) => {
  let cp: ControlPlaneFixture;
  let a: Tenant;
  let b: Tenant;

  beforeAll(async () => {
    cp = await startControlPlane(backend);
    a = await cp.tenant();
    b = await cp.tenant();
  });
  afterAll(async () => cp?.close());

  async function rows() {
    const [d] = await cp.db.query<{ n: number }>("SELECT count(*)::int AS n FROM deployments");
    const [r] = await cp.db.query<{ n: number }>("SELECT count(*)::int AS n FROM revisions");
    return { deployments: d.n, revisions: r.n };
  }

  function expect422(res: { statusCode: number; json(): any }, loc: (string | number)[], label: string) {
    expect(res.statusCode, label).toBe(422);
    expect(res.json().detail[0].loc, label).toEqual(loc);
  }

  const integrationOf = async (tenant: Tenant, name: string) => {
    const res = await tenant.call("POST", "/v1/integrations/github/install", { name, base_url: "https://git.example.test/" });
    expect(res.statusCode).toBe(201);
    return res.json().id as string;
  };

  it("refuses another workspace's integration (422 at integration_id) and accepts its own", async () => {
    const theirs = await integrationOf(b, "theirs");
    const mine = await integrationOf(a, "mine");
    const before = await rows();
    const body = (name: string, integration_id: string) =>
      githubDeployment(name, { source_config: { repo_url: "https://git.example.test/team/agent.git", integration_id } });

    const refused = await a.call("POST", "/v2/deployments", body("cross", theirs));
    expect422(refused, ["body", "source_config", "integration_id"], "cross-workspace");
    expect(refused.json().detail[0].msg).toMatch(/not found/);
    // Upper case is the same id.
    expect422(await a.call("POST", "/v2/deployments", body("cross-upper", theirs.toUpperCase())), ["body", "source_config", "integration_id"], "upper");
    expect(await rows()).toEqual(before);

    const own = await a.call("POST", "/v2/deployments", body("own", mine));
    expect(own.statusCode).toBe(201);
    expect(own.json().source_config.integration_id).toBe(mine);
  });

  const hostileUrls = [
    "--upload-pack=touch /tmp/pwned",
    "--upload-pack=/tmp/x",
    "ext::sh -c touch% /tmp/pwned",
    "ext::sh",
    "file:///etc/passwd",
    "/etc/passwd",
    "ssh://-oProxyCommand=touch%20/tmp/x/repo",
    "ssh://-oProxyCommand=x@host/repo",
    "git@-oProxyCommand=x:repo",
    "https://github.com/example/agent\nmalicious",
    "https://github.com/example/agent%0a",
    "https://user:secret@github.com/example/agent",
    "https://ghp_token@github.com/example/agent",
    "ftp://example.com/agent",
  ];
  const hostileRefs = ["--upload-pack=x", "-main", "../../etc/passwd", "main\nx", "a b", "main@{1}", "main.lock", "main/", "a:b", "a~1", "a\\b"];
  const hostilePaths = ["/etc/passwd", "../langgraph.json", "apps/../../x.json", "apps\\langgraph.json", "lang\u0000graph.json", "langgraph.json\n"];

  it("refuses hostile repo_url, repo_ref and langgraph_config_path at creation, writing nothing", async () => {
    const before = await rows();
    for (const repo_url of hostileUrls) {
      const res = await a.call("POST", "/v2/deployments", githubDeployment("bad-url", { source_config: { repo_url } }));
      expect422(res, ["body", "source_config", "repo_url"], JSON.stringify(repo_url));
    }
    for (const repo_ref of hostileRefs) {
      const res = await a.call(
        "POST",
        "/v2/deployments",
        githubDeployment("bad-ref", { source_revision_config: { repo_ref, langgraph_config_path: "langgraph.json" } }),
      );
      expect422(res, ["body", "source_revision_config", "repo_ref"], JSON.stringify(repo_ref));
    }
    for (const langgraph_config_path of hostilePaths) {
      const res = await a.call(
        "POST",
        "/v2/deployments",
        githubDeployment("bad-path", { source_revision_config: { repo_ref: "main", langgraph_config_path } }),
      );
      expect422(res, ["body", "source_revision_config", "langgraph_config_path"], JSON.stringify(langgraph_config_path));
    }
    const upload = await a.call("POST", "/v2/deployments", {
      name: "bad-upload-path",
      source: "internal_source",
      source_config: {},
      source_revision_config: { langgraph_config_path: "../../langgraph.json" },
    });
    expect422(upload, ["body", "source_revision_config", "langgraph_config_path"], "internal_source");
    expect(await rows()).toEqual(before);
  });

  it("refuses them in a patch too, making no revision", async () => {
    const created = await a.call("POST", "/v2/deployments", githubDeployment("patched"));
    expect(created.statusCode).toBe(201);
    const id = created.json().id as string;
    const before = await rows();
    for (const repo_ref of hostileRefs) {
      expect422(
        await a.call("PATCH", `/v2/deployments/${id}`, { source_revision_config: { repo_ref } }),
        ["body", "source_revision_config", "repo_ref"],
        JSON.stringify(repo_ref),
      );
    }
    for (const langgraph_config_path of hostilePaths) {
      const res = await a.call("PATCH", `/v2/deployments/${id}`, { source_revision_config: { langgraph_config_path } });
      expect422(res, ["body", "source_revision_config", "langgraph_config_path"], JSON.stringify(langgraph_config_path));
    }
    expect(await rows()).toEqual(before);
    const latest = (await a.call("GET", `/v2/deployments/${id}`)).json().latest_revision_id;
    expect(latest).toBe(created.json().latest_revision_id);
  });

  it("accepts the usual forms: scp-like URLs, ssh users, nested refs, commit shas, nested config paths", async () => {
    const good: Record<string, unknown>[] = [
      { source_config: { repo_url: "git@github.com:example/agent.git" } },
      { source_config: { repo_url: "ssh://git@git.example.test:2222/team/agent.git" } },
      {
        source_config: { repo_url: "git://127.0.0.1:9418/agent" },
        source_revision_config: { repo_ref: "refs/tags/v1.2.3", langgraph_config_path: "apps/agent/langgraph.json" },
      },
      { source_revision_config: { repo_ref: "0123456789abcdef0123456789abcdef01234567", langgraph_config_path: "./langgraph.json" } },
      { source_revision_config: { repo_ref: "feature/new-graph", langgraph_config_path: "langgraph.json" } },
    ];
    for (const [i, overrides] of good.entries()) {
      const res = await a.call("POST", "/v2/deployments", githubDeployment(`good-${i}`, overrides));
      expect(res.statusCode, JSON.stringify(overrides)).toBe(201);
    }
  });
});
