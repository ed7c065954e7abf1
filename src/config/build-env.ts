/**
 * What of the control plane's environment reaches a deployment's install and
 * build_command steps, besides the few system variables every child gets
 * (pipeline/child-env.ts): the package managers' own settings, so that a registry
 * mirror, a proxy's CA or corepack's keys set for `slipway up` apply to builds too.
 * Nothing else: agent processes and the graph check never see these, and the control
 * plane's own settings (SLIPWAY_*, database URLs) never match.
 *
 * A name ending in `*` is a prefix. `slipway up --build-env` (or SLIPWAY_BUILD_ENV)
 * adds names, comma-separated.
 */
export const BUILD_ENV_PASSED: readonly string[] = ["COREPACK_*", "npm_config_*", "NPM_CONFIG_*", "YARN_*", "PNPM_*", "PIP_*", "UV_*"];

/**
 * Set by npm for every script it runs, so present when `slipway up` was started with
 * `npm start`: they describe that npm and that folder, not settings for a build
 * (`npm_config_local_prefix` would send an install to Slipway's own folder).
 */
const NPM_SCRIPT_NAMES = new Set([
  "npm_config_local_prefix",
  "npm_config_global_prefix",
  "npm_config_prefix",
  "npm_config_user_agent",
  "npm_config_node_gyp",
  "npm_config_npm_version",
  "npm_config_globalconfig",
  "npm_config_init_module",
]);

const NAME = /^[A-Za-z_][A-Za-z0-9_]*\*?$/;

/** `--build-env` / SLIPWAY_BUILD_ENV: comma-separated names (a trailing `*` for a prefix). */
export function parseBuildEnvNames(value: string | undefined, setting = "--build-env (or SLIPWAY_BUILD_ENV)"): string[] {
  const names = (value ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!NAME.test(name)) throw new Error(`${setting}: '${name}' is not an environment variable name (letters, digits, _, and a trailing * for a prefix)`);
    if (/^SLIPWAY_/i.test(name)) throw new Error(`${setting}: '${name}' is one of Slipway's own settings, which builds never see`);
  }
  return names;
}

/** The variables of `from` that `names` select, npm's per-script names left out unless named exactly. */
export function selectBuildEnv(names: readonly string[], from: NodeJS.ProcessEnv): Record<string, string> {
  const exact = new Set(names.filter((name) => !name.endsWith("*")));
  const prefixes = names.filter((name) => name.endsWith("*")).map((name) => name.slice(0, -1));
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(from)) {
    if (value === undefined || /^SLIPWAY_/i.test(name)) continue;
    if (exact.has(name) || (prefixes.some((prefix) => name.startsWith(prefix)) && !NPM_SCRIPT_NAMES.has(name))) out[name] = value;
  }
  return out;
}
