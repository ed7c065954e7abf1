import { BUILD_ENV_PASSED, selectBuildEnv } from "../config/build-env.ts";

/**
 * The environment of what the pipeline runs for a deployment (installs, build commands,
 * agent processes): the few variables a program needs to work on this machine, and
 * nothing of the control plane's own settings. SLIPWAY_SECRETS_KEY, database URLs and
 * token settings stay in the control plane; user code never sees them.
 */
const PASSED = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TMPDIR",
  "TEMP",
  "TMP",
  "SYSTEMROOT",
  "COMSPEC",
  "PATHEXT",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "npm_config_registry",
  "NPM_CONFIG_REGISTRY",
  "npm_config_userconfig",
  "NPM_CONFIG_USERCONFIG",
];

export function childEnv(extra: Record<string, string | undefined> = {}, from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of PASSED) if (from[name] !== undefined) env[name] = from[name];
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) env[name] = value;
  return env;
}

/** Where the package managers keep downloads: one cache for every build of this control plane. */
export function packageCacheEnv(cacheDir: string): Record<string, string> {
  return {
    npm_config_cache: `${cacheDir}/npm`,
    YARN_CACHE_FOLDER: `${cacheDir}/yarn`,
    npm_config_store_dir: `${cacheDir}/pnpm-store`,
    BUN_INSTALL_CACHE_DIR: `${cacheDir}/bun`,
    PIP_CACHE_DIR: `${cacheDir}/pip`,
    UV_CACHE_DIR: `${cacheDir}/uv`,
    COREPACK_HOME: `${cacheDir}/corepack`,
    COREPACK_ENABLE_DOWNLOAD_PROMPT: "0",
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
    CI: "true",
  };
}

/**
 * The environment of install and build_command steps: childEnv, the package managers'
 * settings of the control plane's environment (config/build-env.ts), and the shared
 * package cache. The cache locations are Slipway's unless the operator named them in
 * `extraNames` (--build-env); what `extraNames` selects wins over both.
 */
export function buildStepEnv(cacheDir: string, extraNames: readonly string[], path: string, from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return childEnv({ ...selectBuildEnv(BUILD_ENV_PASSED, from), ...packageCacheEnv(cacheDir), ...selectBuildEnv(extraNames, from), PATH: path }, from);
}
