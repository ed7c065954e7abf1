import { parseBuildEnvNames } from "./build-env.ts";

type Env = Record<string, string | undefined>;

/** What the revision pipeline is tuned by; `slipway up` reads it from the environment and its flags. */
export interface PipelineSettings {
  /** How long a new revision's processes may take to answer /ok before DEPLOY_FAILED. */
  readinessTimeoutMs: number;
  /** How long the graph check at build time may take before the build goes on without it. */
  checkTimeoutMs: number;
  /** How long the previous revision keeps its requests and runs before SIGTERM. */
  drainTimeoutMs: number;
  /** Between SIGTERM and SIGKILL (the agent's own grace is set a little shorter). */
  stopGraceMs: number;
  /** Lease of a revision job without a heartbeat. */
  jobLeaseMs: number;
  /** How long a push waits for a newer push before it builds. */
  pushQuietMs: number;
  /** Names (a trailing `*`: a prefix) of the control plane's environment that installs and build_commands get besides config/build-env.ts's list. */
  buildEnv: string[];
  /** Minutes idle before a deployment without a setting of its own sleeps (`--sleep-after`); 0: never (docs/decisions/0039). */
  sleepAfterMinutes: number;
  /** How long a "minute" of the sleep rules lasts: 60 000 ms, shorter only in tests. */
  sleepMinuteMs: number;
  /** Builds kept per deployment: those of its last revisions that deployed, the active one always among them (docs/decisions/0051). */
  keepBuilds: number;
  /** Slipway's package managers' download caches are emptied past this size (MB). */
  packageCacheLimitMb: number;
}

/** Used where neither the environment nor a flag says otherwise. */
export const PIPELINE_DEFAULTS: PipelineSettings = {
  readinessTimeoutMs: 300_000,
  checkTimeoutMs: 60_000,
  drainTimeoutMs: 30_000,
  stopGraceMs: 10_000,
  jobLeaseMs: 30_000,
  pushQuietMs: 3_000,
  buildEnv: [],
  sleepAfterMinutes: 0,
  sleepMinuteMs: 60_000,
  keepBuilds: 3,
  packageCacheLimitMb: 2048,
};

/** Longest quiet spell a deployment may be given before it sleeps: 30 days (the flag's bound and the API field's). */
export const MAX_SLEEP_AFTER_MINUTES = 43_200;

/**
 * The revision pipeline's timings, from the environment (seconds):
 *
 * | environment                          | default | meaning |
 * |--------------------------------------|---------|---------|
 * | SLIPWAY_READINESS_TIMEOUT_SECONDS    | 300     | a new revision's processes must answer /ok within this, else DEPLOY_FAILED |
 * | SLIPWAY_CHECK_TIMEOUT_SECONDS        | 60      | the build's graph check; a slower one is left to the readiness check |
 * | SLIPWAY_DRAIN_TIMEOUT_SECONDS        | 30      | a replaced revision keeps its requests this long before SIGTERM |
 * | SLIPWAY_STOP_GRACE_SECONDS           | 10      | between SIGTERM and SIGKILL; open requests at `up`'s stop |
 * | SLIPWAY_PUSH_QUIET_SECONDS           | 3       | a push waits this long for a newer push before it builds |
 * | SLIPWAY_JOB_LEASE_SECONDS            | 30      | a revision job without a heartbeat for this long is taken over |
 * | SLIPWAY_SLEEP_AFTER_MINUTES          | 0 (off) | deployments without a setting of their own sleep after this many idle minutes (`--sleep-after`) |
 * | SLIPWAY_SLEEP_MINUTE_MS              | 60000   | for tests only: how long a "minute" of the sleep rules lasts |
 * | SLIPWAY_KEEP_BUILDS                  | 3       | builds kept per deployment: those of its last revisions that deployed (docs/decisions/0051) |
 * | SLIPWAY_PACKAGE_CACHE_LIMIT_MB       | 2048    | the download caches Slipway fills are emptied past this size |
 *
 * and `--build-env` (SLIPWAY_BUILD_ENV): names that installs and build_commands get
 * besides the package managers' settings (config/build-env.ts).
 */
export function pipelineSettingsFromEnv(env: Env = process.env, flags: { buildEnv?: string; sleepAfter?: string } = {}): PipelineSettings {
  const seconds = (name: string, fallbackMs: number) => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallbackMs;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number of seconds, not '${raw}'`);
    return value * 1000;
  };
  return {
    ...PIPELINE_DEFAULTS,
    readinessTimeoutMs: seconds("SLIPWAY_READINESS_TIMEOUT_SECONDS", PIPELINE_DEFAULTS.readinessTimeoutMs),
    checkTimeoutMs: seconds("SLIPWAY_CHECK_TIMEOUT_SECONDS", PIPELINE_DEFAULTS.checkTimeoutMs),
    drainTimeoutMs: seconds("SLIPWAY_DRAIN_TIMEOUT_SECONDS", PIPELINE_DEFAULTS.drainTimeoutMs),
    stopGraceMs: seconds("SLIPWAY_STOP_GRACE_SECONDS", PIPELINE_DEFAULTS.stopGraceMs),
    pushQuietMs: seconds("SLIPWAY_PUSH_QUIET_SECONDS", PIPELINE_DEFAULTS.pushQuietMs),
    jobLeaseMs: seconds("SLIPWAY_JOB_LEASE_SECONDS", PIPELINE_DEFAULTS.jobLeaseMs),
    buildEnv: parseBuildEnvNames(flags.buildEnv ?? env.SLIPWAY_BUILD_ENV),
    sleepAfterMinutes: wholeNumber(
      "--sleep-after (SLIPWAY_SLEEP_AFTER_MINUTES)",
      flags.sleepAfter ?? env.SLIPWAY_SLEEP_AFTER_MINUTES,
      PIPELINE_DEFAULTS.sleepAfterMinutes,
      MAX_SLEEP_AFTER_MINUTES,
    ),
    sleepMinuteMs: wholeNumber("SLIPWAY_SLEEP_MINUTE_MS", env.SLIPWAY_SLEEP_MINUTE_MS, PIPELINE_DEFAULTS.sleepMinuteMs, 60_000, 1),
    keepBuilds: wholeNumber("SLIPWAY_KEEP_BUILDS", env.SLIPWAY_KEEP_BUILDS, PIPELINE_DEFAULTS.keepBuilds, 1000, 1),
    packageCacheLimitMb: wholeNumber(
      "SLIPWAY_PACKAGE_CACHE_LIMIT_MB",
      env.SLIPWAY_PACKAGE_CACHE_LIMIT_MB,
      PIPELINE_DEFAULTS.packageCacheLimitMb,
      10_000_000,
      1,
    ),
  };
}

function wholeNumber(name: string, raw: string | undefined, fallback: number, max: number, min = 0): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, not '${raw}'`);
  return value;
}
