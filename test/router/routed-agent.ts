import type { FastifyInstance } from "fastify";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildControlPlaneApp } from "../../src/controlplane/app.ts";
import { routeModules } from "../../src/controlplane/routes.ts";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { LogService } from "../../src/controlplane/logs/service.ts";
import { LogWriter } from "../../src/pipeline/log-writer.ts";
import type { AgentProcess } from "../../src/pipeline/runtime/agent-process.ts";
import { RevisionGroup } from "../../src/pipeline/runtime/revision-group.ts";
import type { CorsConfig } from "../../src/http/cors.ts";
import { createDeploymentRouter, type DeploymentRouter } from "../../src/router/deployment-router.ts";
import { freshBackend } from "../support/backends.ts";
import { openHarness, type Harness } from "../controlplane/tenancy-harness.ts";
import { githubDeployment } from "../controlplane/deployments-fixture.ts";

/**
 * A deployment behind the router, over real parts: the control plane's app and tenancy
 * tables on PGlite, and a real agent server on a Unix socket (as the pipeline starts
 * them) that accepts only the router's key. The pipeline's supervised process is stood
 * in for by the server's socket; `serve()` makes it the deployment's active revision,
 * with the CORS policy its listening line would report.
 */
export interface RoutedAgent {
  harness: Harness;
  /** The control plane's app, the router in it. */
  app: FastifyInstance;
  router: DeploymentRouter;
  agent: RunningAgentServer;
  base: string;
  deploymentId: string;
  owner: { workspace_id: string; organization_id: string; api_key: string };
  url(path?: string): string;
  serve(cors?: CorsConfig): void;
  /** Makes these processes the active revision instead of the in-process agent. */
  serveProcesses(processes: AgentProcess[]): void;
  /** The deploy log that processes of the deployment write to. */
  deployLog(): LogWriter;
  close(): Promise<void>;
}

export const INTERNAL_KEY = "internal-router-key-0123456789";

export async function openRoutedAgent(configPath: string, name: string): Promise<RoutedAgent> {
  const harness = await openHarness("pglite", { modules: routeModules });
  const target = freshBackend("pglite", name);
  const sockets = mkdtempSync(join(tmpdir(), "slipway-router-test-"));
  let serving: RevisionGroup | undefined;
  let app: FastifyInstance | undefined;
  let agent: RunningAgentServer | undefined;
  const close = async () => {
    await app?.close();
    await agent?.close();
    await harness.close();
    rmSync(sockets, { recursive: true, force: true });
  };
  try {
    agent = await startAgentServer({
      configPath,
      socketPath: join(sockets, "agent.sock"),
      dataDir: target.dataDir,
      schema: target.schema,
      apiKey: INTERNAL_KEY,
      logLevel: "error",
    });
    const router = createDeploymentRouter({ db: harness.db, authenticator: harness.authenticator, target: () => serving, holdMs: 300 });
    app = await buildControlPlaneApp({ deps: harness.deps, authenticator: harness.authenticator, router, logLevel: "error" });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const address = app.server.address();
    const base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    const owner = await harness.tenancy.bootstrap({ keyScope: "workspace" });
    const created = await app.inject({ method: "POST", url: "/v2/deployments", headers: { "x-api-key": owner.api_key }, payload: githubDeployment(name) });
    const deploymentId: string = created.json().id;
    const running = agent;
    const deployLog = () =>
      new LogWriter(new LogService(harness.deps), { workspaceId: owner.workspace_id, deploymentId, revisionId: deploymentId, type: "deploy" }, []);
    return {
      harness,
      app,
      router,
      agent: running,
      base,
      deploymentId,
      owner,
      url: (path = "") => `${base}/deployments/${deploymentId}${path}`,
      serve(cors) {
        const process_ = { endpoint: { socketPath: running.socketPath!, basePath: running.basePath }, cors } as unknown as AgentProcess;
        serving = new RevisionGroup(deploymentId, "revision", [process_], INTERNAL_KEY, deployLog());
      },
      serveProcesses(processes) {
        serving = new RevisionGroup(deploymentId, "revision", processes, INTERNAL_KEY, deployLog());
      },
      deployLog,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
