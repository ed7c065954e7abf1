import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";

/** The two storage back ends every storage-touching suite runs against. */
export type BackendName = "pglite" | "postgres";
export const BACKENDS: BackendName[] = ["pglite", "postgres"];

export interface BackendTarget {
  name: BackendName;
  /** Set for postgres: the test server's URL. */
  databaseUrl?: string;
  /** Set for pglite: a fresh data directory. */
  dataDir?: string;
  /** A schema of its own so suites never see each other's rows. */
  schema: string;
}

/** A fresh, isolated database target on the given back end. */
export function freshBackend(name: BackendName, prefix = "t"): BackendTarget {
  // Workers may not inherit the setup's environment; the template path comes by inject.
  process.env.SLIPWAY_PGLITE_TEMPLATE ??= inject("pgliteTemplate");
  const schema = `${prefix}_${randomBytes(6).toString("hex")}`;
  if (name === "postgres") return { name, databaseUrl: inject("databaseUrl"), schema };
  return { name, dataDir: mkdtempSync(join(tmpdir(), "slipway-pglite-")), schema };
}

export function testRedisUrl(): string {
  return inject("redisUrl");
}
