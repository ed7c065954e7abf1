import { relative } from "node:path";
import { Command, type Command as CommandType } from "commander";
import { BUILD_ENV_PASSED } from "../config/build-env.ts";
import { resolveControlPlaneConfig } from "../config/controlplane.ts";
import { addRateLimitFlags } from "../ratelimit/cli-options.ts";
import { tuneControlPlaneV8 } from "./support/control-plane-v8.ts";

/**
 * `slipway up`: serve the control plane (controlplane/server.ts starts it; this file reads
 * its flags). Over an empty database it first creates a default organization, workspace
 * and API key and prints them once, so that `npm start` is all a new user needs.
 */
export function registerUpCommand(program: CommandType): void {
  // Flags fall back to the environment, then to these defaults (config/controlplane.ts):
  // shown in --help, but not given to commander, which would make them beat the environment.
  const defaults = resolveControlPlaneConfig({}, {});
  const up = new Command("up")
    .description("Serve the control plane (/v1, /v2, also under /api-host; docs at /docs)")
    .option("--port <port>", `port to listen on, 0 picks a free one (env SLIPWAY_PORT; default: ${defaults.port})`, undefined)
    .option("--host <host>", `address to bind (env SLIPWAY_HOST; default: ${defaults.host})`, undefined)
    .option(
      "--data-dir <dir>",
      `embedded database, secrets.key and lock file (env SLIPWAY_DATA_DIR; default: ${relative(process.cwd(), defaults.dataDir) || "."})`,
      undefined,
    )
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
    .option(
      "--allow-unsandboxed",
      "serve several organizations although deployments cannot be sandboxed here: their code could then read each other's data (env SLIPWAY_ALLOW_UNSANDBOXED=1; see docs/security.md, Isolation)",
    )
    .option(
      "--runtime <runtime>",
      "what runs deployments: local (sandboxed processes) or docker (a container per replica; needs dockerd) (env SLIPWAY_RUNTIME; default: local)",
    )
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
  // Before any module or database of the control plane is loaded (decision 0054).
  tuneControlPlaneV8();
  const { startControlPlane } = await import("../controlplane/server.ts");
  const { pipelineSettingsFromEnv } = await import("../config/pipeline.ts");
  const { rateLimitFlagsFrom } = await import("../ratelimit/cli-options.ts");

  const config = resolveControlPlaneConfig(flags);
  const pipeline = pipelineSettingsFromEnv(process.env, { buildEnv: flags.buildEnv, sleepAfter: flags.sleepAfter });
  const docker = dockerChoice(flags);
  if (docker && pipeline.sleepAfterMinutes > 0)
    throw new Error("--sleep-after: deployments do not sleep on the Docker runtime; leave it out, or use the local runtime");
  const server = await startControlPlane({
    config,
    pipeline,
    // --rate-limit-policy, --redis-url, --no-rate-limit, ... (--region is resolved with the rest of config).
    rateLimit: rateLimitFlagsFrom({ ...flags, region: config.region }),
    docker,
    allowUnsandboxed: flags.allowUnsandboxed === true || process.env.SLIPWAY_ALLOW_UNSANDBOXED === "1",
    news: {
      say: (text, event) => console.log(flags.json ? JSON.stringify(event) : text),
      warn: (text) => console.error(text),
    },
  });
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    await server.close();
    process.exit(0);
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}

/** Where `--runtime docker` finds dockerd and its base image; undefined for the local runtime. */
function dockerChoice(flags: UpFlags): { host?: string; baseImage?: string } | undefined {
  const runtime = flags.runtime ?? process.env.SLIPWAY_RUNTIME ?? "local";
  if (runtime === "local") return undefined;
  if (runtime !== "docker") throw new Error(`--runtime must be local or docker, not ${JSON.stringify(runtime)}`);
  return {
    host: flags.dockerHost ?? (process.env.SLIPWAY_DOCKER_HOST || undefined),
    baseImage: flags.dockerBaseImage ?? (process.env.SLIPWAY_DOCKER_BASE_IMAGE || undefined),
  };
}
