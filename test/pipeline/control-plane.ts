import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { startControlPlane, type ControlPlaneProcess } from "../support/control-plane-process.ts";

/**
 * `slipway up` as the pipeline tests run it: its data in `<root>/cp`, on the suite's
 * PostgreSQL (a control schema of its own) or the embedded database, allowed to fetch
 * from the git daemon on loopback, and sharing one package cache across the suite so
 * that only the first build of the sample project installs from the registry.
 * `env` adds or overrides settings (timeouts, grace periods).
 */
export function startPipelineControlPlane(
  root: string,
  options: { backend?: "pglite" | "postgres"; args?: string[]; env?: Record<string, string | undefined>; cwd?: string } = {},
): Promise<ControlPlaneProcess> {
  const storage = options.backend === "postgres" ? ["--database-url", inject("databaseUrl")] : [];
  return startControlPlane(
    ["--data-dir", join(root, "cp"), ...storage, ...(options.args ?? [])],
    {
      SLIPWAY_CONTROL_SCHEMA: `cp_${Math.random().toString(36).slice(2, 10)}`,
      SLIPWAY_GIT_ALLOW_HOSTS: "127.0.0.1",
      SLIPWAY_PACKAGE_CACHE: join(tmpdir(), "slipway-test-package-cache"),
      SLIPWAY_DATABASE_URL: undefined,
      ...options.env,
    },
    options.cwd,
  );
}
