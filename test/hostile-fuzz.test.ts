import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestAgentServer, type TestAgentServer } from "./support/agent-server.ts";
import { BACKENDS } from "./support/backends.ts";
import { buildRequest, hostileCorpus, operationsOf, pick, seededRandom, send, targetsOf, type Hostile, type Operation } from "./support/fuzz.ts";
import { githubDeployment, startControlPlane, type ControlPlaneFixture, type Tenant } from "./controlplane/deployments-fixture.ts";

/**
 * Hostile values into every field of every operation of both servers' /openapi.json,
 * on both storage back ends: no answer may be a 5xx (issue 16). Each field gets a few
 * values of the corpus, picked by a seeded generator: the same requests on every run,
 * and every value of the corpus still lands in many fields.
 */
const SEED = 16;
/** SLIPWAY_FUZZ_VALUES=100 sends every value of the corpus to every field (minutes, not seconds). */
const VALUES_PER_FIELD = Number(process.env.SLIPWAY_FUZZ_VALUES ?? 3);

interface Finding {
  label: string;
  status: number;
  text: string;
}

/** Runs the sampled requests of `ops`; `pathValues(op)` gives real ids for the operation's path. */
async function fuzz(
  base: string,
  doc: Record<string, any>,
  ops: Operation[],
  pathValues: (op: Operation) => Promise<Record<string, string>>,
  known: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ sent: number; findings: Finding[] }> {
  const random = seededRandom(SEED);
  const corpus: Hostile[] = hostileCorpus(random);
  const findings: Finding[] = [];
  let sent = 0;
  for (const op of ops) {
    const ids = await pathValues(op);
    for (const target of targetsOf(op)) {
      for (const value of pick(random, corpus, VALUES_PER_FIELD)) {
        const request = buildRequest(doc, op, target, value, ids, known);
        sent++;
        try {
          const { status, text } = await send(base, request, headers);
          // 501 is a deliberate answer (an operation this release does not implement), not a failure.
          if (status >= 500 && status !== 501) findings.push({ label: request.label, status, text });
        } catch (error) {
          findings.push({ label: request.label, status: 0, text: String(error) });
        }
      }
    }
  }
  return { sent, findings };
}

describe.each(BACKENDS)("hostile input fuzz on %s", (backend) => {
  let agent: TestAgentServer;
  let cp: ControlPlaneFixture;
  let cpUrl: string;
  let tenant: Tenant;
  beforeAll(async () => {
    agent = await startTestAgentServer(backend, { workers: 2 });
    cp = await startControlPlane(backend);
    await cp.app.listen({ host: "127.0.0.1", port: 0 });
    cpUrl = `http://127.0.0.1:${(cp.app.server.address() as AddressInfo).port}`;
    tenant = await cp.tenant();
  });
  afterAll(async () => {
    await agent?.close();
    await cp?.close();
  });

  it("the agent server answers no 5xx", async () => {
    const doc = await (await fetch(`${agent.url}/openapi.json`)).json();
    const client = agent.client;
    // Fresh resources for each operation that names some: a DELETE must not starve the next one.
    const pathValues = async (op: Operation) => {
      const ids: Record<string, string> = { namespace: "inner" };
      if (op.pathParams.includes("assistant_id")) ids.assistant_id = (await client.assistants.create({ graphId: "agent" })).assistant_id;
      if (op.pathParams.includes("thread_id")) {
        const thread = await client.threads.create({ graphId: "agent" });
        ids.thread_id = thread.thread_id;
        if (op.pathParams.includes("run_id") || op.pathParams.includes("checkpoint_id")) {
          const run = await client.runs.create(thread.thread_id, "agent", { input: { messages: [{ role: "user", content: "hi" }] } });
          await client.runs.join(thread.thread_id, run.run_id);
          ids.run_id = run.run_id;
          ids.checkpoint_id = (await client.threads.getState(thread.thread_id)).checkpoint.checkpoint_id ?? "";
        }
      }
      return ids;
    };
    const known = { assistant_id: "agent", graph_id: "agent", namespace: ["fuzz"], key: "k", value: {}, as_node: "agent" };
    const { sent, findings } = await fuzz(agent.url, doc, operationsOf(doc), pathValues, known);
    expect(sent).toBeGreaterThan(300);
    expect(findings).toEqual([]);
  });

  it("the control plane answers no 5xx", async () => {
    const doc = await (await fetch(`${cpUrl}/openapi.json`)).json();
    let n = 0;
    const pathValues = async (op: Operation) => {
      const ids: Record<string, string> = {};
      if (op.pathParams.includes("deployment_id")) {
        const made = await tenant.call("POST", "/v2/deployments", githubDeployment(`fuzz-${backend}-${++n}`));
        ids.deployment_id = made.json().id;
        ids.revision_id = (await tenant.call("GET", `/v2/deployments/${ids.deployment_id}/revisions`)).json().resources[0]?.id;
      }
      if (op.pathParams.includes("listener_id")) {
        const made = await tenant.call("POST", "/v2/listeners", { compute_type: "k8s", compute_id: `fuzz-${++n}`, compute_config: {} });
        ids.listener_id = made.json().id;
      }
      if (op.pathParams.includes("provider_id")) {
        const provider = `fuzz-${++n}`;
        await tenant.call("POST", "/v2/auth/providers", {
          provider_id: provider,
          name: provider,
          client_id: "client",
          auth_url: "https://auth.example.invalid/authorize",
          token_url: "https://auth.example.invalid/token",
        });
        ids.provider_id = provider;
      }
      return ids;
    };
    const known = {
      name: "fuzz",
      source_config: { repo_url: "https://github.com/example/agent", deployment_type: "dev" },
      source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
      compute_type: "k8s",
      compute_id: "fuzz-cluster",
      compute_config: {},
    };
    const { sent, findings } = await fuzz(cpUrl, doc, operationsOf(doc), pathValues, known, tenant.headers);
    expect(sent).toBeGreaterThan(100);
    expect(findings).toEqual([]);
  });
});
