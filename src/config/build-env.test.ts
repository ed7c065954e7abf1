import { describe, expect, it } from "vitest";
import { buildStepEnv } from "../pipeline/child-env.ts";
import { BUILD_ENV_PASSED, parseBuildEnvNames, selectBuildEnv } from "./build-env.ts";

const CONTROL_PLANE_ENV = {
  PATH: "/usr/bin",
  COREPACK_INTEGRITY_KEYS: "0",
  COREPACK_NPM_REGISTRY: "http://mirror.internal/npm",
  COREPACK_HOME: "/opt/corepack",
  npm_config_registry: "http://mirror.internal/npm",
  NPM_CONFIG_STRICT_SSL: "false",
  npm_config_cache: "/home/op/.npm",
  // Set by npm for `npm start`: about that npm, not a build setting.
  npm_config_local_prefix: "/srv/slipway",
  npm_config_user_agent: "npm/11.0.0 node/v20.20.2",
  YARN_NPM_REGISTRY_SERVER: "http://mirror.internal/npm",
  PNPM_HOME: "/opt/pnpm",
  SLIPWAY_SECRETS_KEY: "k".repeat(64),
  SLIPWAY_DATABASE_URL: "postgres://cp",
  DATABASE_URL: "postgres://other",
  MY_CA_BUNDLE: "/etc/ca.pem",
  ARTIFACTORY_TOKEN: "t0ken-value",
};

describe("what of the control plane's environment reaches builds", () => {
  it("the package managers' settings, and nothing else of the control plane's", () => {
    expect(selectBuildEnv(BUILD_ENV_PASSED, CONTROL_PLANE_ENV)).toEqual({
      COREPACK_INTEGRITY_KEYS: "0",
      COREPACK_NPM_REGISTRY: "http://mirror.internal/npm",
      COREPACK_HOME: "/opt/corepack",
      npm_config_registry: "http://mirror.internal/npm",
      NPM_CONFIG_STRICT_SSL: "false",
      npm_config_cache: "/home/op/.npm",
      YARN_NPM_REGISTRY_SERVER: "http://mirror.internal/npm",
      PNPM_HOME: "/opt/pnpm",
    });
  });

  it("an install's environment: those settings, Slipway's cache unless named with --build-env, the names --build-env adds", () => {
    const env = buildStepEnv("/cache", [], "/node/bin:/usr/bin", CONTROL_PLANE_ENV);
    expect(env).toMatchObject({
      PATH: "/node/bin:/usr/bin",
      COREPACK_INTEGRITY_KEYS: "0",
      npm_config_registry: "http://mirror.internal/npm",
      PNPM_HOME: "/opt/pnpm",
    });
    expect(env.npm_config_cache).toBe("/cache/npm");
    expect(env.COREPACK_HOME).toBe("/cache/corepack");
    for (const name of ["SLIPWAY_SECRETS_KEY", "SLIPWAY_DATABASE_URL", "DATABASE_URL", "MY_CA_BUNDLE", "ARTIFACTORY_TOKEN", "npm_config_local_prefix"]) {
      expect(env[name], name).toBeUndefined();
    }
    const added = buildStepEnv("/cache", parseBuildEnvNames("MY_CA_BUNDLE, ARTIFACTORY_*,COREPACK_HOME"), "/usr/bin", CONTROL_PLANE_ENV);
    expect(added).toMatchObject({ MY_CA_BUNDLE: "/etc/ca.pem", ARTIFACTORY_TOKEN: "t0ken-value", COREPACK_HOME: "/opt/corepack" });
    expect(added.DATABASE_URL).toBeUndefined();
  });

  it("--build-env: names or prefixes; Slipway's own settings and non-names are refused", () => {
    expect(parseBuildEnvNames(undefined)).toEqual([]);
    expect(parseBuildEnvNames(" A_B , C* ,")).toEqual(["A_B", "C*"]);
    expect(() => parseBuildEnvNames("SLIPWAY_SECRETS_KEY")).toThrow(/'SLIPWAY_SECRETS_KEY' is one of Slipway's own settings/);
    expect(() => parseBuildEnvNames("A=B")).toThrow(/--build-env \(or SLIPWAY_BUILD_ENV\): 'A=B' is not an environment variable name/);
    expect(() => parseBuildEnvNames("*")).toThrow(/is not an environment variable name/);
    // A prefix never reaches Slipway's own settings either.
    expect(selectBuildEnv(parseBuildEnvNames("S*"), CONTROL_PLANE_ENV)).toEqual({});
  });
});
