import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentServer, type RunningAgentServer } from "../src/agentserver/server.ts";
import { buildControlPlaneApp } from "../src/controlplane/app.ts";
import { routeModules } from "../src/controlplane/routes.ts";
import type { FastifyInstance } from "fastify";
import { LogService } from "../src/controlplane/logs/service.ts";
import { LogWriter } from "../src/pipeline/log-writer.ts";
import type { AgentProcess } from "../src/pipeline/runtime/agent-process.ts";
import { RevisionGroup } from "../src/pipeline/runtime/revision-group.ts";
import { createDeploymentRouter } from "../src/router/deployment-router.ts";
import { FIXTURE_CONFIG } from "./support/agent-server.ts";
import { BACKENDS, freshBackend } from "./support/backends.ts";
import { githubDeployment } from "./controlplane/deployments-fixture.ts";
import { openHarness, type Harness } from "./controlplane/tenancy-harness.ts";
import { callSocket } from "./pipeline/agent-socket.ts";

/**
 * Issue 31, item 7: a date the database cannot store (year 0, a leap second, an offset
 * that carries the instant past year 9999) answered 500; years 1 to 99 came back from
 * the embedded back end as 19xx or 20xx. Every date field of both
 * servers now answers 422 naming the field, on the control plane's log routes (root and
 * /api-host, per revision and per deployment) and on the crons of an agent server,
 * called directly and through the deployment router of `slipway up`.
 */
const OUT_OF_RANGE = [
  "0000-01-01T00:00:00Z",
  "0001-01-01T00:00:00+01:00",
  "0099-06-01T00:00:00Z",
  "9999-12-31T23:59:59-01:00",
  "2016-12-31T23:59:60Z",
  "2020-01-01T00:00:00+01",
  "2021-02-29T00:00:00Z",
];
const EDGES = ["0100-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "2024-02-29t12:00:00.123456+05:30"];
const ROUTER_KEY = "internal-router-key-0123456789";

describe.each(BACKENDS)("dates out of range on %s", (backend) => {
  let harness: Harness;
  let app: FastifyInstance;
  let agent: RunningAgentServer;
  let sockets: string;
  let base: string;
  let owner: { workspace_id: string; api_key: string };
  let deploymentId: string;
  let revisionId: string;

  beforeAll(async () => {
    harness = await openHarness(backend, { modules: routeModules });
    const target = freshBackend(backend, "dates");
    sockets = mkdtempSync(join(tmpdir(), "slipway-dates-"));
    agent = await startAgentServer({
      configPath: FIXTURE_CONFIG,
      socketPath: join(sockets, "agent.sock"),
      dataDir: target.dataDir,
      databaseUrl: target.databaseUrl,
      schema: target.schema,
      apiKey: ROUTER_KEY,
      logLevel: "error",
    });
    let serving: RevisionGroup | undefined;
    const router = createDeploymentRouter({ db: harness.db, authenticator: harness.authenticator, target: () => serving, holdMs: 300 });
    app = await buildControlPlaneApp({ deps: harness.deps, authenticator: harness.authenticator, router, logLevel: "error" });
    await app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    owner = await harness.tenancy.bootstrap({ keyScope: "workspace" });
    deploymentId = (await call("POST", "/v2/deployments", githubDeployment(`dates-${backend}`))).json.id;
    revisionId = (await call("GET", `/v2/deployments/${deploymentId}/revisions`)).json.resources[0].id;
    const log = new LogWriter(new LogService(harness.deps), { workspaceId: owner.workspace_id, deploymentId, revisionId, type: "deploy" }, []);
    serving = new RevisionGroup(
      deploymentId,
      "revision",
      [{ endpoint: { socketPath: agent.socketPath!, basePath: agent.basePath } } as AgentProcess],
      ROUTER_KEY,
      log,
    );
  });
  afterAll(async () => {
    await app?.close();
    await agent?.close();
    await harness?.close();
    if (sockets) rmSync(sockets, { recursive: true, force: true });
  });

  async function call(method: string, path: string, body?: unknown, key = owner.api_key): Promise<{ status: number; json: any }> {
    const answer = await fetch(base + path, {
      method,
      headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await answer.text();
    return { status: answer.status, json: text ? JSON.parse(text) : undefined };
  }

  it("the control plane's log routes answer 422 naming start_time or end_time", async () => {
    const routes = [
      `/v1/projects/${deploymentId}/revisions/${revisionId}/build_logs`,
      `/v1/projects/${deploymentId}/revisions/${revisionId}/deploy_logs`,
      `/v1/projects/${deploymentId}/deploy_logs`,
    ];
    const wrong: string[] = [];
    for (const prefix of ["", "/api-host"]) {
      for (const route of routes) {
        for (const field of ["start_time", "end_time"]) {
          for (const value of OUT_OF_RANGE) {
            const answer = await call("POST", prefix + route, { [field]: value });
            const loc = answer.json?.detail?.[0]?.loc;
            if (answer.status !== 422 || JSON.stringify(loc) !== JSON.stringify(["body", field]))
              wrong.push(`${prefix}${route} ${field}=${value}: ${answer.status} ${JSON.stringify(answer.json)}`);
          }
          for (const value of EDGES) {
            const answer = await call("POST", prefix + route, { [field]: value });
            if (answer.status !== 200) wrong.push(`${prefix}${route} ${field}=${value}: ${answer.status} ${JSON.stringify(answer.json)}`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("an agent server's crons answer 422 naming end_time, directly and through the router, and keep the edges", async () => {
    const direct = `${base}/deployments/${deploymentId}`;
    const wrong: string[] = [];
    for (const [mount, key] of [
      ["direct", ROUTER_KEY],
      [direct, owner.api_key],
    ] as const) {
      const send = async (method: string, path: string, body: unknown) => {
        if (mount === "direct") {
          const answer = await callSocket(agent.socketPath!, path, {
            method,
            headers: { "x-api-key": key, "content-type": "application/json" },
            body: JSON.stringify(body),
          });
          return { status: answer.status, json: answer.body ? JSON.parse(answer.body) : undefined };
        }
        return call(method, `/deployments/${deploymentId}${path}`, body, key);
      };
      const thread = (await send("POST", "/threads", {})).json;
      const cron = (await send("POST", "/runs/crons", { assistant_id: "agent", schedule: "0 0 1 1 *" })).json;
      const attempts: [string, string, Record<string, unknown>][] = [
        ["POST", "/runs/crons", { assistant_id: "agent", schedule: "0 0 1 1 *" }],
        ["POST", `/threads/${thread.thread_id}/runs/crons`, { assistant_id: "agent", schedule: "0 0 1 1 *" }],
        ["PATCH", `/runs/crons/${cron.cron_id}`, {}],
      ];
      for (const [method, path, rest] of attempts) {
        for (const value of OUT_OF_RANGE) {
          const answer = await send(method, path, { ...rest, end_time: value });
          if (answer.status !== 422 || !String(answer.json?.detail).includes("end_time"))
            wrong.push(`${mount} ${method} ${path} end_time=${value}: ${answer.status} ${JSON.stringify(answer.json)}`);
        }
        for (const value of EDGES) {
          const answer = await send(method, path, { ...rest, end_time: value });
          const kept = answer.json?.end_time && new Date(answer.json.end_time).getTime() === new Date(value).getTime();
          if (answer.status !== 200 || !kept) wrong.push(`${mount} ${method} ${path} end_time=${value}: ${answer.status} ${JSON.stringify(answer.json)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});
