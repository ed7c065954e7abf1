import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSecrets } from "../../src/controlplane/secrets/sealed.ts";
import { BACKENDS } from "../support/backends.ts";
import { githubDeployment, PUBLIC_URL, startControlPlane, type ControlPlaneFixture } from "./deployments-fixture.ts";

const VENDOR_DEPLOYMENT_REQUIRED = [
  "name",
  "source",
  "source_config",
  "source_revision_config",
  "secrets",
  "id",
  "tenant_id",
  "created_at",
  "updated_at",
  "status",
  "latest_revision_id",
  "active_revision_id",
];

describe.each(BACKENDS)("deployments on %s", (backend) => {
  let cp: ControlPlaneFixture;
  beforeAll(async () => {
    cp = await startControlPlane(backend);
  });
  afterAll(async () => cp?.close());

  it("creates a deployment with every vendor field, its first revision and a url", async () => {
    const t = await cp.tenant();
    const res = await t.call("POST", "/v2/deployments", githubDeployment("agent-one"));
    expect(res.statusCode).toBe(201);
    const d = res.json();
    for (const field of VENDOR_DEPLOYMENT_REQUIRED) expect(d).toHaveProperty(field);
    expect(d).toMatchObject({
      name: "agent-one",
      source: "github",
      tenant_id: t.workspaceId,
      // Nothing serves yet: its first revision is on its way.
      status: "AWAITING_DATABASE",
      active_revision_id: null,
      url: `${PUBLIC_URL}/deployments/${d.id}`,
      source_config: { repo_url: "https://github.com/example/agent", deployment_type: "dev", build_on_push: false },
      source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json", image_uri: null, repo_commit_sha: null },
      secrets: [{ name: "OPENAI_API_KEY" }],
    });
    const revision = (await t.call("GET", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`)).json();
    for (const field of ["id", "created_at", "updated_at", "status", "source", "source_revision_config", "status_message"]) {
      expect(revision).toHaveProperty(field);
    }
    expect(revision.status).toBe("CREATING");
  });

  it("never returns secret values and keeps them encrypted at rest", async () => {
    const t = await cp.tenant();
    const plaintext = "sk-very-secret-0123456789";
    const created = await t.call("POST", "/v2/deployments", githubDeployment("secretive", { secrets: [{ name: "API_TOKEN", value: plaintext }] }));
    expect(created.statusCode).toBe(201);
    const id = created.json().id;
    for (const url of [`/v2/deployments/${id}`, "/v2/deployments", `/v2/deployments/${id}/revisions`]) {
      expect((await t.call("GET", url)).body).not.toContain(plaintext);
    }
    expect(created.body).not.toContain(plaintext);
    const [row] = await cp.db.query<{ secrets_sealed: Record<string, string> }>("SELECT secrets_sealed FROM revisions WHERE deployment_id = $1", [id]);
    expect(JSON.stringify(row)).not.toContain(plaintext);
    expect(openSecrets(cp.deps.secretsKey, id, row.secrets_sealed)).toEqual([{ name: "API_TOKEN", value: plaintext }]);
    // Bound to its deployment: the same sealed value does not open for another one.
    expect(() => openSecrets(cp.deps.secretsKey, cp.deps.newId(), row.secrets_sealed)).toThrow();
  });

  it("refuses a second deployment of the same name in a workspace with 409, allows it in another", async () => {
    const a = await cp.tenant();
    const b = await cp.tenant();
    expect((await a.call("POST", "/v2/deployments", githubDeployment("twin"))).statusCode).toBe(201);
    const again = await a.call("POST", "/v2/deployments", githubDeployment("twin"));
    expect(again.statusCode).toBe(409);
    expect(again.json().detail).toContain("twin");
    expect((await b.call("POST", "/v2/deployments", githubDeployment("twin"))).statusCode).toBe(201);
  });

  it("lists with the {resources, offset} envelope, newest first, paging by limit/offset", async () => {
    const t = await cp.tenant();
    for (const name of ["alpha", "beta", "gamma"]) {
      expect((await t.call("POST", "/v2/deployments", githubDeployment(name))).statusCode).toBe(201);
    }
    const first = (await t.call("GET", "/v2/deployments?limit=2")).json();
    expect(first.resources.map((d: { name: string }) => d.name)).toEqual(["gamma", "beta"]);
    expect(first.offset).toBe(2);
    const second = (await t.call("GET", `/v2/deployments?limit=2&offset=${first.offset}`)).json();
    expect(second.resources.map((d: { name: string }) => d.name)).toEqual(["alpha"]);
    expect(second.offset).toBe(3);
  });

  it("filters by name_contains, deployment_type, status, deployment_ids, tags and remote_reconciled", async () => {
    const t = await cp.tenant();
    const dev = (await t.call("POST", "/v2/deployments", githubDeployment("chat-dev"))).json();
    const prodBody = githubDeployment("chat_prod", { source_config: { repo_url: "https://github.com/example/agent", deployment_type: "prod" } });
    const prod = (await t.call("POST", "/v2/deployments", prodBody)).json();
    await t.call("POST", "/v2/deployments", githubDeployment("other"));
    const names = async (query: string) => ((await t.call("GET", `/v2/deployments?${query}`)).json().resources as { name: string }[]).map((d) => d.name).sort();

    expect(await names("name_contains=CHAT")).toEqual(["chat-dev", "chat_prod"]);
    // LIKE wildcards in the filter are literal characters.
    expect(await names("name_contains=_")).toEqual(["chat_prod"]);
    expect(await names("deployment_type=prod")).toEqual(["chat_prod"]);
    expect(await names("status=AWAITING_DATABASE")).toHaveLength(3);
    expect(await names("status=READY")).toEqual([]);
    expect(await names(`deployment_ids=${dev.id},${prod.id}`)).toEqual(["chat-dev", "chat_prod"]);
    expect(await names(`tag_value_ids=${dev.id}`)).toEqual([]);
    expect(await names("remote_reconciled=true")).toEqual([]);
    expect(await names("remote_reconciled=false")).toHaveLength(3);
  });

  it("answers 404 for another workspace's deployment, on every route", async () => {
    const owner = await cp.tenant();
    const stranger = await cp.tenant();
    const d = (await owner.call("POST", "/v2/deployments", githubDeployment("private"))).json();
    const calls: [string, string, unknown?][] = [
      ["GET", `/v2/deployments/${d.id}`],
      ["PATCH", `/v2/deployments/${d.id}`, { source_config: { build_on_push: true } }],
      ["DELETE", `/v2/deployments/${d.id}`],
      ["GET", `/v2/deployments/${d.id}/revisions`],
      ["GET", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`],
      ["POST", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/redeploy`],
      ["POST", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}/interrupt`],
    ];
    for (const [method, url, body] of calls) {
      const res = await stranger.call(method as "GET", url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().detail).toBe(`Deployment ID ${d.id} not found.`);
    }
    expect((await stranger.call("GET", "/v2/deployments")).json().resources).toEqual([]);
    expect((await owner.call("GET", `/v2/deployments/${d.id}`)).json().source_config.build_on_push).toBe(false);
  });

  it("bulk deletes: 200 when all go, 207 when some do, 404 when none does", async () => {
    const t = await cp.tenant();
    const ids: string[] = [];
    for (const name of ["b1", "b2", "b3"]) ids.push((await t.call("POST", "/v2/deployments", githubDeployment(name))).json().id);
    const all = await t.call("DELETE", `/v2/deployments?deployment_ids=${ids[0]}&deployment_ids=${ids[1]}`);
    expect(all.statusCode).toBe(200);
    expect(all.json()).toEqual({ deleted_deployment_ids: [ids[0], ids[1]], failed: [] });
    const missing = cp.deps.newId();
    const some = await t.call("DELETE", `/v2/deployments?deployment_ids=${ids[2]}&deployment_ids=${missing}`);
    expect(some.statusCode).toBe(207);
    expect(some.json()).toEqual({ deleted_deployment_ids: [ids[2]], failed: [{ deployment_id: missing, detail: `Deployment ID ${missing} not found.` }] });
    const none = await t.call("DELETE", `/v2/deployments?deployment_ids=${missing}`);
    expect(none.statusCode).toBe(404);
    expect(none.json()).toEqual({ detail: `Deployment ID ${missing} not found.` });
    // No pipeline runs here to finish the deletions: they stay AWAITING_DELETE.
    const statuses = (await t.call("GET", "/v2/deployments")).json().resources.map((d: { status: string }) => d.status);
    expect(statuses).toEqual(["AWAITING_DELETE", "AWAITING_DELETE", "AWAITING_DELETE"]);
  });

  it("marks a deleted deployment AWAITING_DELETE, stops its revisions, and frees its name at once", async () => {
    const t = await cp.tenant();
    const d = (await t.call("POST", "/v2/deployments", githubDeployment("short-lived"))).json();
    expect((await t.call("DELETE", `/v2/deployments/${d.id}?delete_tracing_project=true`)).statusCode).toBe(204);
    // The pipeline (not running in this suite) removes the rows once the processes stopped.
    expect((await t.call("GET", `/v2/deployments/${d.id}`)).json().status).toBe("AWAITING_DELETE");
    const revision = (await t.call("GET", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`)).json();
    expect(revision).toMatchObject({ status: "INTERRUPTED", status_message: "The deployment is being deleted." });
    // Deleting again while it happens is no error, and the name can be taken again.
    expect((await t.call("DELETE", `/v2/deployments/${d.id}`)).statusCode).toBe(204);
    expect((await t.call("POST", "/v2/deployments", githubDeployment("short-lived"))).statusCode).toBe(201);
    expect((await t.call("DELETE", `/v2/deployments/${cp.deps.newId()}`)).statusCode).toBe(404);
  });

  it("refuses image deployments with 422 at source when deployments run as local processes (the Docker runtime is needed)", async () => {
    const t = await cp.tenant();
    for (const source of ["external_docker", "internal_docker"]) {
      const res = await t.call("POST", "/v2/deployments", {
        name: `image-${source}`,
        source,
        source_config: { custom_url: "https://agents.example.com/one", resource_spec: { min_scale: 1 } },
        source_revision_config: { image_uri: "registry.example.com/agent:1" },
        secrets: [],
      });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0].loc).toEqual(["body", "source"]);
      expect(res.json().detail[0].msg).toMatch(/needs the Docker runtime \(start the control plane with `slipway up --runtime docker`\)/);
    }
    expect((await t.call("GET", "/v2/deployments")).json().resources).toEqual([]);
  });
});
