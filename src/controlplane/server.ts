import { randomUUID } from "node:crypto";
import { controlDatabaseOptions, loadSecretsKey, lockDataDir, type ControlPlaneConfig } from "../config/controlplane.ts";
import type { PipelineSettings } from "../config/pipeline.ts";
import { closeServer } from "../http/close-server.ts";
import { assertPortFree } from "../http/port-check.ts";
import { startPipeline } from "../pipeline/index.ts";
import { connectDocker, type DockerChoice } from "../pipeline/runtime/docker/connect.ts";
import { Isolation } from "../pipeline/runtime/isolation.ts";
import { unsandboxedTenantsRefusal } from "../pipeline/runtime/tenant-guard.ts";
import type { RateLimitFlags } from "../ratelimit/cli-options.ts";
import { rateLimitOptionsFromFlags } from "../ratelimit/setup.ts";
import { createDeploymentRouter } from "../router/deployment-router.ts";
import type { Database } from "../storage/database.ts";
import { openDatabase } from "../storage/open.ts";
import { buildControlPlaneApp, resolveRateLimitIdentity } from "./app.ts";
import type { ControlPlaneDeps } from "./context.ts";
import { checkSecretsKey } from "./secrets/key-canary.ts";
import { buildServices } from "./services.ts";
import { announceBootstrap, announceIsolation, type StartUpNews } from "./start-up-news.ts";
import { createAuthenticator } from "./tenancy/authenticate.ts";

export interface ControlPlaneOptions {
  /** Address, storage, region, bearer tokens, git hosts, quotas (config/controlplane.ts). */
  config: ControlPlaneConfig;
  /** The revision pipeline's timings and build environment (config/pipeline.ts). */
  pipeline: PipelineSettings;
  rateLimit: RateLimitFlags;
  /** Run deployments as Docker containers (`--runtime docker`); without it, as local sandboxed processes. */
  docker?: DockerChoice;
  /** Serve several organizations although deployments cannot be sandboxed here (`--allow-unsandboxed`). */
  allowUnsandboxed: boolean;
  /** Where start-up news and warnings go (`slipway up` prints them, as text or JSON lines). */
  news: StartUpNews;
}

export interface RunningControlPlane {
  url: string;
  /** Stops serving, then the pipeline and the processes it runs, then the database, and lets the data directory go. */
  close(): Promise<void>;
}

/**
 * Starts the control plane: the API (routes → services → repositories), the router that
 * serves each deployment at its URL on the same port, and the revision pipeline that
 * builds and runs them, all on one database and one set of services. Over an empty
 * database it first creates a default organization, workspace and API key (announced once).
 */
export async function startControlPlane(options: ControlPlaneOptions): Promise<RunningControlPlane> {
  const { config, news } = options;
  // Before the first start creates an organization and prints its key "only this once".
  await assertPortFree(config.host, config.port);
  const release = config.databaseUrl ? () => undefined : lockDataDir(config.dataDir);
  let db: Database | undefined;
  let pipeline: Awaited<ReturnType<typeof startPipeline>> | undefined;
  try {
    const secrets = loadSecretsKey(config.dataDir);
    if (secrets.source === "generated") {
      news.say(`Slipway: generated a secrets key in ${secrets.path} (keep it: sealed secrets need it)`, { event: "secrets_key_generated", path: secrets.path });
    } else if (config.databaseUrl && secrets.source === "file") {
      news.warn("slipway up: using the secrets key from the data directory; nodes sharing this database must all set SLIPWAY_SECRETS_KEY to it");
    }
    const isolation = Isolation.probe();
    const docker = options.docker ? await connectDocker(options.docker) : undefined;
    announceIsolation(news, isolation, docker?.version);
    db = await openDatabase(controlDatabaseOptions(config));
    const deps: ControlPlaneDeps = {
      db,
      secretsKey: secrets.key,
      now: () => new Date(),
      newId: () => randomUUID(),
      publicUrl: config.publicUrl ?? "",
      dataDir: config.dataDir,
      pushQuietMs: options.pipeline.pushQuietMs,
      gitHosts: config.gitHosts,
      maxDeploymentsPerWorkspace: config.maxDeploymentsPerWorkspace,
      containerRuntime: docker !== undefined,
    };
    // One set of services: the routes' and the pipeline's (it reaches the control plane only through them).
    const services = buildServices(deps);
    const refusal = docker ? undefined : await unsandboxedTenantsRefusal(services.tenancy, isolation, options.allowUnsandboxed);
    if (refusal) throw new Error(refusal);
    await checkSecretsKey(db, secrets.key, new Date());
    const created = await services.tenancy.ensureDefaultTenant();
    if (created) announceBootstrap(news, created);

    // JWT verification (jose) is loaded only when bearer tokens are configured (decision 0054).
    const bearer = config.bearer ? (await import("../auth/bearer.ts")).createBearerVerifier(config.bearer) : undefined;
    const authenticator = createAuthenticator({ db, bearer });
    const rateLimit = await rateLimitOptionsFromFlags(options.rateLimit, {
      resolveIdentity: (request) => resolveRateLimitIdentity(authenticator, request),
      log: { warn: (object, message) => news.warn(JSON.stringify({ level: "warn", msg: message, ...object })) },
    });
    // Deployments are served on this port too, by the router in front of the control plane's routes.
    const router = createDeploymentRouter({
      db,
      authenticator,
      target: (id) => pipeline?.runtime.target(id),
      wake: (id) => pipeline?.wake(id) ?? false,
      unserved: (id) => pipeline?.unserved(id),
    });
    deps.onDeploymentsDeleted = (ids) => router.forget(ids);
    const app = await buildControlPlaneApp({ deps, services, authenticator, rateLimit, router });
    const urlOf = (port: number) => `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
    // Known before listening when the port is: deployments served again at start-up get it too.
    if (config.port) deps.publicUrl ||= urlOf(config.port);
    pipeline = await startPipeline({
      db,
      services,
      secretsKey: secrets.key,
      now: deps.now,
      newId: deps.newId,
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      gitHosts: config.gitHosts,
      settings: options.pipeline,
      log: app.log,
      publicUrl: () => deps.publicUrl,
      isolation,
      allowUnsandboxed: options.allowUnsandboxed,
      docker: docker?.settings,
    });
    await app.listen({ host: config.host, port: config.port });
    const address = app.server.address();
    const url = urlOf(typeof address === "object" && address ? address.port : config.port);
    deps.publicUrl ||= url;
    news.say(`Slipway control plane listening on ${url} (docs: ${url}/docs, storage: ${db.kind})`, { event: "listening", url, storage: db.kind });

    const [openDb, openPipeline] = [db, pipeline];
    return {
      url,
      async close() {
        await closeServer(app, options.pipeline.stopGraceMs).catch(() => undefined);
        await openPipeline.stop().catch(() => undefined);
        await openDb.close().catch(() => undefined);
        release();
      },
    };
  } catch (error) {
    await pipeline?.stop().catch(() => undefined);
    await db?.close().catch(() => undefined);
    release();
    throw error;
  }
}
