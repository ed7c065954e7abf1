import { relative } from "node:path";
import { Command, type Command as CommandType } from "commander";
import { BUILD_ENV_PASSED } from "../config/build-env.ts";
import { resolveControlPlaneConfig } from "../config/controlplane.ts";
import type { ControlPlaneDeps } from "../controlplane/context.ts";
import { addRateLimitFlags } from "../ratelimit/cli-options.ts";

/**
 * `slipway up`: serve the control plane. Over an empty database it first creates a
 * default organization, workspace and API key and prints them once, so that
 * `npm start` is all a new user needs.
 */
export function registerUpCommand(program: CommandType): void {
  // Flags fall back to the environment, then to these defaults (config/controlplane.ts):
  // shown in --help, but not given to commander, which would make them beat the environment.
  const defaults = resolveControlPlaneConfig({}, {});
  const up = new Command("up")
    .description("Serve the control plane (/v1, /v2, also under /api-host; docs at /docs)")
    .option("--port <port>", `port to listen on, 0 picks a free one (env SLIPWAY_PORT; default: ${defaults.port})`, undefined)
    .option("--host <host>", `address to bind (env SLIPWAY_HOST; default: ${defaults.host})`, undefined)
    .option("--data-dir <dir>", `embedded database, secrets.key and lock file (env SLIPWAY_DATA_DIR; default: ${relative(process.cwd(), defaults.dataDir) || "."})`, undefined)
    .option("--database-url <url>", "PostgreSQL server instead of the embedded database (env SLIPWAY_DATABASE_URL; default: embedded)")
    .option("--region <region>", `us or eu: selects the rate-limit table (env SLIPWAY_REGION; default: ${defaults.region})`, undefined)
    .option(
      "--allow-private-git-hosts <hosts>",
      "comma-separated git hosts (names or IPs) integrations and fetches may reach although private or loopback (env SLIPWAY_GIT_ALLOW_HOSTS; default: none)",
    )
    .option(
      "--max-deployments-per-workspace <n>",
      `deployments a workspace may have; more are refused with 403 (env SLIPWAY_MAX_DEPLOYMENTS_PER_WORKSPACE; 0: no limit; default: ${defaults.maxDeploymentsPerWorkspace})`,
    )
    .option("--allow-unsandboxed", "serve several organizations although deployments cannot be sandboxed here: their code could then read each other's data (env SLIPWAY_ALLOW_UNSANDBOXED=1; see docs/security.md, Isolation)")
    .option("--runtime <runtime>", "what runs deployments: local (sandboxed processes) or docker (a container per replica; needs dockerd) (env SLIPWAY_RUNTIME; default: local)")
    .option("--docker-host <url>", "where dockerd listens, for --runtime docker (env SLIPWAY_DOCKER_HOST; default: the docker CLI's)")
    .option(
      "--docker-base-image <image>",
      "base of every revision's image, for --runtime docker: a local image with Node 20+ as `node` on its PATH (env SLIPWAY_DOCKER_BASE_IMAGE; default: one built here from this machine's node)",
    )
    .option(
      "--build-env <names>",
      `comma-separated names from this environment that installs and build_commands also get (a trailing * for a prefix; env SLIPWAY_BUILD_ENV). They always get ${BUILD_ENV_PASSED.join(", ")}`,
    )
    .option(
      "--sleep-after <minutes>",
      "deployments without a setting of their own (slipway_sleep_after_minutes) stop their processes after this many minutes without requests, runs or a cron due, and start again on the next one (env SLIPWAY_SLEEP_AFTER_MINUTES; default: 0, never; local runtime only)",
    )
    .option("--json", "print machine-readable JSON lines instead of text");
  // --rate-limit-policy, --redis-url, --no-rate-limit, ... (our --region above is shared).
  addRateLimitFlags(up).action(async (flags) => {
    try {
      await serve(flags);
    } catch (error) {
      console.error(`slipway up: ${(error as Error).message}`);
      process.exit(1);
    }
  });
  program.addCommand(up);
}

interface UpFlags extends Record<string, unknown> {
  port?: string;
  host?: string;
  dataDir?: string;
  databaseUrl?: string;
  region?: string;
  allowPrivateGitHosts?: string;
  maxDeploymentsPerWorkspace?: string;
  allowUnsandboxed?: boolean;
  buildEnv?: string;
  runtime?: string;
  dockerHost?: string;
  dockerBaseImage?: string;
  sleepAfter?: string;
  json?: boolean;
}

async function serve(flags: UpFlags): Promise<void> {
  const { randomUUID } = await import("node:crypto");
  const { loadSecretsKey, lockDataDir } = await import("../config/controlplane.ts");
  const { assertPortFree } = await import("../http/port-check.ts");
  const { openDatabase } = await import("../storage/open.ts");
  const { createBearerVerifier } = await import("../auth/bearer.ts");
  const { buildControlPlaneApp, resolveRateLimitIdentity } = await import("../controlplane/app.ts");
  const { buildServices } = await import("../controlplane/services.ts");
  const { rateLimitFlagsFrom, rateLimitOptionsFromFlags } = await import("../ratelimit/index.ts");
  const { createAuthenticator } = await import("../controlplane/tenancy/authenticate.ts");
  const { TenancyService } = await import("../controlplane/tenancy/service.ts");
  const { checkSecretsKey } = await import("../controlplane/secrets/key-canary.ts");
  const { startPipeline } = await import("../pipeline/index.ts");
  const { pipelineSettingsFromEnv } = await import("../config/pipeline.ts");
  const { createDeploymentRouter } = await import("../router/deployment-router.ts");
  const { Isolation } = await import("../pipeline/runtime/isolation.ts");
  const { unsandboxedTenantsRefusal } = await import("../pipeline/runtime/tenant-guard.ts");

  const config = resolveControlPlaneConfig(flags);
  // Before the first start creates an organization and prints its key "only this once".
  await assertPortFree(config.host, config.port);
  const release = config.databaseUrl ? () => undefined : lockDataDir(config.dataDir);
  const say = (text: string, event: Record<string, unknown>) => console.log(flags.json ? JSON.stringify(event) : text);
  let db: Awaited<ReturnType<typeof openDatabase>> | undefined;
  let pipeline: Awaited<ReturnType<typeof startPipeline>> | undefined;
  try {
    const settings = pipelineSettingsFromEnv(process.env, { buildEnv: flags.buildEnv, sleepAfter: flags.sleepAfter });
    const secrets = loadSecretsKey(config.dataDir);
    if (secrets.source === "generated") {
      say(`Slipway: generated a secrets key in ${secrets.path} (keep it: sealed secrets need it)`, { event: "secrets_key_generated", path: secrets.path });
    } else if (config.databaseUrl && secrets.source === "file") {
      console.error("slipway up: using the secrets key from the data directory; nodes sharing this database must all set SLIPWAY_SECRETS_KEY to it");
    }
    const isolation = Isolation.probe();
    const allowUnsandboxed = flags.allowUnsandboxed === true || process.env.SLIPWAY_ALLOW_UNSANDBOXED === "1";
    const docker = await dockerSettings(flags);
    if (docker && settings.sleepAfterMinutes > 0) throw new Error("--sleep-after: deployments do not sleep on the Docker runtime; leave it out, or use the local runtime");
    if (docker) {
      // Builds still run in the local sandbox; what serves runs in containers.
      say(`Slipway: deployments run in Docker containers (dockerd ${docker.version}); builds: ${isolation.describe()}`, { event: "isolation", runtime: "docker", docker: docker.version, sandbox: isolation.sandbox.level, limits: isolation.limits.kind });
    } else {
      say(`Slipway: ${isolation.describe()}`, { event: "isolation", runtime: "local", sandbox: isolation.sandbox.level, limits: isolation.limits.kind, reason: isolation.sandbox.reason ?? isolation.limits.reason });
    }
    db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.pgliteDir, schema: config.schema, component: "control" });
    const refusal = docker ? undefined : await unsandboxedTenantsRefusal(db, isolation, allowUnsandboxed);
    if (refusal) throw new Error(refusal);
    await checkSecretsKey(db, secrets.key, new Date());
    const deps: ControlPlaneDeps = { db, secretsKey: secrets.key, now: () => new Date(), newId: () => randomUUID(), publicUrl: config.publicUrl ?? "", dataDir: config.dataDir, pushQuietMs: settings.pushQuietMs, gitHosts: config.gitHosts, maxDeploymentsPerWorkspace: config.maxDeploymentsPerWorkspace, containerRuntime: docker !== undefined };

    const created = await new TenancyService(deps).ensureDefaultTenant();
    if (created) {
      say(
        [
          'Slipway: new installation, created organization "Default" (plan self_hosted_enterprise)',
          `  organization_id: ${created.organization_id}`,
          `  workspace_id:    ${created.workspace_id}`,
          `  api_key:         ${created.api_key}`,
          "  The key is shown only this once: store it now. Send it as X-Api-Key and the workspace id as X-Tenant-Id.",
        ].join("\n"),
        { event: "bootstrap", organization_id: created.organization_id, workspace_id: created.workspace_id, api_key: created.api_key },
      );
    }

    const authenticator = createAuthenticator({ db, bearer: config.bearer ? createBearerVerifier(config.bearer) : undefined });
    const rateLimit = await rateLimitOptionsFromFlags(rateLimitFlagsFrom({ ...flags, region: config.region }), {
      resolveIdentity: (request) => resolveRateLimitIdentity(authenticator, request),
      log: { warn: (object, message) => console.error(JSON.stringify({ level: "warn", msg: message, ...object })) },
    });
    // Deployments are served on this port too, by the router in front of the control plane's routes.
    const router = createDeploymentRouter({ db, authenticator, target: (id) => pipeline?.runtime.target(id), wake: (id) => pipeline?.wake(id) ?? false });
    deps.onDeploymentsDeleted = (ids) => router.forget(ids);
    // One set of services: the routes' and the pipeline's (it reaches the control plane only through them).
    const services = buildServices(deps);
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
      settings,
      log: app.log,
      publicUrl: () => deps.publicUrl,
      isolation,
      allowUnsandboxed,
      docker: docker?.settings,
    });
    await app.listen({ host: config.host, port: config.port });
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : config.port;
    const url = urlOf(port);
    deps.publicUrl ||= url;
    say(`Slipway control plane listening on ${url} (docs: ${url}/docs, storage: ${db.kind})`, { event: "listening", url, storage: db.kind });

    const openDb = db;
    const openPipeline = pipeline;
    let stopping = false;
    const shutdown = async () => {
      if (stopping) return;
      stopping = true;
      await app.close().catch(() => undefined);
      await openPipeline.stop().catch(() => undefined);
      await openDb.close().catch(() => undefined);
      release();
      process.exit(0);
    };
    process.once("SIGINT", shutdown);
    process.once("SIGTERM", shutdown);
  } catch (error) {
    await pipeline?.stop().catch(() => undefined);
    await db?.close().catch(() => undefined);
    release();
    throw error;
  }
}

/** The Docker runtime's settings when `--runtime docker` is asked for, once dockerd answers. */
async function dockerSettings(flags: UpFlags) {
  const runtime = flags.runtime ?? process.env.SLIPWAY_RUNTIME ?? "local";
  if (runtime === "local") return undefined;
  if (runtime !== "docker") throw new Error(`--runtime must be local or docker, not ${JSON.stringify(runtime)}`);
  const { DockerCli } = await import("../pipeline/runtime/docker/docker-cli.ts");
  const cli = new DockerCli(flags.dockerHost ?? (process.env.SLIPWAY_DOCKER_HOST || undefined));
  const version = await cli.serverVersion().catch((error: Error) => {
    throw new Error(`--runtime docker: dockerd cannot be reached (${error.message}). Start it, or name its socket with --docker-host.`);
  });
  return { version, settings: { docker: cli, baseImage: flags.dockerBaseImage ?? (process.env.SLIPWAY_DOCKER_BASE_IMAGE || undefined) } };
}
