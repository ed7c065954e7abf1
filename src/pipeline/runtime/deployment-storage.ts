import { createHash } from "node:crypto";
import { chownSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { dataDirTemplate } from "../../storage/pglite.ts";
import { startSharedPgliteHost, type SharedPgliteHost } from "../../storage/shared-pglite-host.ts";
import type { PipelineDeps } from "../context.ts";
import { deploymentRoleUrl, dropDeploymentRole, retireStaleLogins } from "./deployment-role.ts";
import type { Isolation } from "./isolation.ts";

/**
 * Where a deployment's threads, runs, assistants and store live. They belong to the
 * deployment, not to a revision, so every revision's agent processes attach to the same
 * database:
 * - with a PostgreSQL server, a schema of its own on it (`deployment_<id>`), reached as a
 *   role of its own that owns that schema and nothing else;
 * - on the embedded default, a PGlite directory that this control plane opens when a
 *   revision is launched (not before: a deployment whose builds fail holds no database)
 *   and shares with the agent processes through a local socket (docs/decisions/0010), in
 *   a directory of its own given to the deployment's uid: no other deployment can open it.
 * The control plane's credentials are never part of it (docs/decisions/0030).
 */
export interface StorageAttachment {
  /** Environment for an agent process. */
  env: Record<string, string>;
  /** Arguments for an agent process. */
  args: string[];
  /** Directories its sandbox must show (the storage socket's). */
  directories: string[];
}

export class DeploymentStorage {
  private readonly hosts = new Map<string, Promise<SharedPgliteHost>>();
  /**
   * Closes under way: a database's next opening waits for its last close (a wake during a
   * sleep's release, say), so two PGlite instances never hold one directory at once.
   */
  private readonly closing = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: PipelineDeps,
    private readonly isolation: Isolation,
  ) {}

  /** `rotate`: with a new credential (PostgreSQL; see deployment-role.ts). */
  async attach(deploymentId: string, options: { rotate?: boolean } = {}): Promise<StorageAttachment> {
    const schema = schemaOf(deploymentId);
    if (this.deps.databaseUrl) {
      const url = await deploymentRoleUrl(this.deps, deploymentId, schema, options);
      return { env: { SLIPWAY_DATABASE_URL: url }, args: ["--database-schema", schema], directories: [] };
    }
    const host = await this.host(deploymentId);
    return { env: { SLIPWAY_STORAGE_SOCKET: host.socketPath }, args: [], directories: [dirname(host.socketPath)] };
  }

  /**
   * Closes the deployment's embedded database, keeping its files: nothing of the deployment
   * runs. The next `attach` opens it again. Nothing to do on a PostgreSQL server.
   */
  async release(deploymentId: string): Promise<void> {
    const host = this.hosts.get(deploymentId);
    if (!host) return this.closing.get(deploymentId);
    this.hosts.delete(deploymentId);
    const closed = host.then(
      (open) => open.close(),
      () => undefined,
    );
    const settled = closed.catch(() => undefined);
    this.closing.set(deploymentId, settled);
    void settled.then(() => {
      if (this.closing.get(deploymentId) === settled) this.closing.delete(deploymentId);
    });
    await closed;
  }

  /**
   * Called when a deployment's replaced processes have stopped: any credential but the
   * current one stops opening its database (PostgreSQL). Nothing to do embedded.
   */
  async retired(deploymentId: string): Promise<void> {
    if (this.deps.databaseUrl) await retireStaleLogins(this.deps, deploymentId);
  }

  /** Drops the deployment's data: its schema, or its embedded database directory. */
  async remove(deploymentId: string): Promise<void> {
    if (this.deps.databaseUrl) {
      await this.deps.db.query(`DROP SCHEMA IF EXISTS ${schemaOf(deploymentId)} CASCADE`);
      await dropDeploymentRole(this.deps, deploymentId);
      return;
    }
    // An attach that came during the release opened the database again: close that too.
    while (this.hosts.has(deploymentId) || this.closing.has(deploymentId)) await this.release(deploymentId);
    rmSync(this.directory(deploymentId), { recursive: true, force: true });
    rmSync(dirname(storageSocketPath(this.deps.dataDir, deploymentId)), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    for (const deploymentId of [...this.hosts.keys()]) await this.release(deploymentId).catch(() => undefined);
    await Promise.all(this.closing.values());
  }

  private host(deploymentId: string): Promise<SharedPgliteHost> {
    let host = this.hosts.get(deploymentId);
    if (!host) {
      const dir = this.directory(deploymentId);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const socketPath = storageSocketPath(this.deps.dataDir, deploymentId);
      // The socket's directory and the socket itself belong to the deployment's uid (mode 0700, 0600).
      if (process.platform !== "win32") this.isolation.ownDirectory(deploymentId, dirname(socketPath));
      host = (this.closing.get(deploymentId) ?? Promise.resolve())
        .then(() => dataDirTemplate(this.deps.dataDir))
        .then((template) => startSharedPgliteHost({ dataDir: join(dir, "db"), schema: "slipway_agent", socketPath, template }))
        .then((started) => {
          const uid = this.isolation.uidOf(deploymentId);
          if (uid !== undefined) chownSync(socketPath, uid, uid);
          return started;
        });
      const opening = host;
      // A failed opening is forgotten (the next attach tries again), unless another replaced it.
      opening.catch(() => this.hosts.get(deploymentId) === opening && this.hosts.delete(deploymentId));
      this.hosts.set(deploymentId, opening);
    }
    return host;
  }

  private directory(deploymentId: string): string {
    return deploymentDirectory(this.deps.dataDir, deploymentId);
  }
}

function deploymentDirectory(dataDir: string, deploymentId: string): string {
  return join(dataDir, "deployments", deploymentId);
}

/**
 * Where a deployment's embedded database is served: alone in a directory, which its
 * sandbox shows. A socket path must fit in 104 bytes on every platform: deep data
 * directories use the temp folder instead.
 */
export function storageSocketPath(dataDir: string, deploymentId: string): string {
  const dir = deploymentDirectory(dataDir, deploymentId);
  const hashed = `slipway-${createHash("sha256").update(dir).digest("hex").slice(0, 16)}`;
  if (process.platform === "win32") return `\\\\.\\pipe\\${hashed}`;
  const natural = join(dir, "socket", "db.sock");
  return natural.length < 100 ? natural : join(tmpdir(), hashed, "db.sock");
}

/** One schema per deployment on a shared server (a uuid's hex fits PostgreSQL's 63 bytes). */
export function schemaOf(deploymentId: string): string {
  return `deployment_${deploymentId.replace(/-/g, "").toLowerCase()}`;
}
