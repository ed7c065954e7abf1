import { createHash, randomBytes } from "node:crypto";
import { chmodSync, chownSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import type { PipelineDeps } from "../../context.ts";
import { StepFailure } from "../../failure.ts";
import { revisionPython } from "../../builder/python-link.ts";
import { agentEnvironment, replicaShape } from "../agent-env.ts";
import type { DeploymentStorage, StorageAttachment } from "../deployment-storage.ts";
import { loginRolesOf } from "../deployment-role.ts";
import { chownTree, deploymentUid } from "../deployment-user.ts";
import { RevisionGroup } from "../revision-group.ts";
import { RevisionRotation } from "../revision-rotation.ts";
import type { LaunchSpec } from "../runtime.ts";
import { adoptableContainers } from "./container-adoption.ts";
import { ContainerReplica } from "./container-replica.ts";
import { DatabaseRelay, isLoopbackHost, localServer } from "./database-relay.ts";
import type { DockerCli } from "./docker-cli.ts";
import { buildImage } from "./image-build.ts";
import { ensurePythonImage, pythonInRevision } from "./python-layer.ts";
import { ensureRuntimeImage, runtimeImageTag, type RuntimeImage } from "./runtime-image.ts";
import { removeStaleImages } from "./stale-images.ts";

/** A replica's private /tmp, and its limit of processes and threads (as the local sandbox's). */
const TMP_BYTES = 256 << 20;
const MAX_PIDS = 512;
const DEFAULT_MEMORY_MB = 2048;
/** Where a revision's build is in its image (its host path may lie under /tmp, a tmpfs in the container). */
const BUILD_IN_IMAGE = "/srv/revision";
/** Where an image source's agent server listens (the vendor's agent server images: PORT 8000). */
const IMAGE_PORT = 8000;
/** Labels every container of a control plane carries (restore and deletion find them by these). */
const LABEL = {
  owner: "dev.slipway.owner",
  workspace: "dev.slipway.workspace",
  deployment: "dev.slipway.deployment",
  revision: "dev.slipway.revision",
  instance: "dev.slipway.instance",
  /** The runtime image its revision image was made on (a container on an older one is not adopted). */
  runtime: "dev.slipway.runtime",
};

export interface DockerSettings {
  docker: DockerCli;
  /** The operator's base image (`--docker-base-image`); else one made of the host's node. */
  baseImage?: string;
}

/**
 * Runs deployments as containers (docs/decisions/0030): a revision becomes an image (the
 * runtime image, see runtime-image.ts, plus the revision's build), each replica a
 * container with resource_spec's memory and CPU, a read-only root, a private /tmp, no
 * capabilities, the deployment's own uid, and of the host only two directories: its
 * agent server's socket directory (the router reaches it there, as a local process) and
 * its storage socket's. Containers carry labels naming workspace, deployment and
 * revision: a control plane that starts again (even after kill -9) adopts the running
 * containers of each active revision that still answer /ok on the current runtime image
 * (its PostgreSQL relay reopened at the same path), and removes the rest.
 */
export class DockerRuntime extends RevisionRotation {
  private runtimeImage: Promise<RuntimeImage> | undefined;
  /** Python layers being made or made (by runtime image and environment): two revisions wait for one. */
  private readonly pythonImages = new Map<string, Promise<string>>();
  /** Each deployment's way to a PostgreSQL server on this machine, while it runs here. */
  private readonly relays = new Map<string, Promise<DatabaseRelay>>();
  private socketDir: string | undefined;
  private replicas = 0;
  /** Containers a previous control plane started that this one took over. */
  private readonly adopted = new Set<string>();
  /** Tells this control plane's containers from those a previous one (killed) left. */
  private readonly instance = randomBytes(6).toString("hex");
  private readonly owner: string;

  constructor(
    deps: PipelineDeps,
    storage: DeploymentStorage,
    private readonly settings: DockerSettings,
  ) {
    super(deps, storage);
    this.owner = createHash("sha256").update(deps.dataDir).digest("hex").slice(0, 16);
  }

  async start(spec: LaunchSpec): Promise<RevisionGroup> {
    const { count, memoryMb } = replicaShape(spec);
    const memory = memoryMb ?? DEFAULT_MEMORY_MB;
    const adopted = await this.adopt(spec, count, memory).catch((error: Error) => {
      this.deps.log.warn({ err: error, deployment_id: spec.deploymentId }, "adopting a previous control plane's containers failed; starting new ones");
      return undefined;
    });
    if (adopted) return adopted;
    await this.removeLeftovers(spec.deploymentId);
    const internalKey = randomBytes(32).toString("base64url");
    const containers = spec.build ? await this.agentContainers(spec, spec.build, memory, internalKey) : await this.imageContainers(spec, memory, internalKey);
    warnIfUnreachable(spec, this.deps.publicUrl?.());
    const replicas = Array.from({ length: count }, (_, index) => {
      // Unique beside the containers (and sockets) of an earlier control plane that this one adopted.
      const file = `${this.instance.slice(0, 6)}-${++this.replicas}-${index + 1}`;
      const container = `slipway-${this.owner.slice(0, 8)}-${spec.revisionId.slice(0, 8)}-${file}`;
      const name = `${spec.revisionId.slice(0, 8)}#${index + 1}`;
      return new ContainerReplica(this.settings.docker, { name, container, log: spec.log, serverLog: this.deps.log, ...containers(file) }, memory);
    });
    const group = new RevisionGroup(spec.deploymentId, spec.revisionId, replicas, internalKey, spec.log);
    this.launched.add(group);
    for (const replica of replicas) replica.start();
    return group;
  }

  /**
   * The revision's containers that a previous control plane of this data directory left
   * running, taken over as they are when every one still serves (container-adoption.ts):
   * no restart, no request lost. Not on the embedded database: the deployment's storage
   * was served by that control plane and went with it.
   */
  private async adopt(spec: LaunchSpec, count: number, memory: number): Promise<RevisionGroup | undefined> {
    if (spec.build && !this.deps.databaseUrl) return undefined;
    const { docker } = this.settings;
    const found = await adoptableContainers(docker, {
      labels: { [LABEL.owner]: this.owner, [LABEL.deployment]: spec.deploymentId, [LABEL.revision]: spec.revisionId },
      count,
      runtimeLabel: spec.build ? [LABEL.runtime, runtimeImageTag(this.settings.baseImage)] : undefined,
      image: spec.build ? undefined : spec.image,
      containerPort: spec.build ? undefined : IMAGE_PORT,
    });
    if (!found) return undefined;
    const sockets = spec.build ? this.socketDirectory(spec.deploymentId, this.uidOf(spec.deploymentId)) : undefined;
    // Its storage reaches the database through a relay socket in that directory: only there is it reopened.
    if (sockets && found.containers.some((c) => dirname(c.endpoint.socketPath ?? "") !== sockets)) return undefined;
    const containers = spec.build
      ? await this.agentContainers(spec, spec.build, memory, found.internalKey)
      : await this.imageContainers(spec, memory, found.internalKey);
    const replicas = found.containers.map((container, index) => {
      const file = container.endpoint.socketPath ? basename(container.endpoint.socketPath, ".sock") : container.name;
      const name = `${spec.revisionId.slice(0, 8)}#${index + 1}`;
      return new ContainerReplica(docker, { name, container: container.name, log: spec.log, serverLog: this.deps.log, ...containers(file) }, memory);
    });
    const group = new RevisionGroup(spec.deploymentId, spec.revisionId, replicas, found.internalKey, spec.log);
    this.launched.add(group);
    found.containers.forEach((container, index) => {
      this.adopted.add(container.id);
      replicas[index].adopt(container.endpoint, container.cors);
    });
    return group;
  }

  /**
   * After the restore: containers a previous control plane left that serve nothing now
   * (deleted deployments, replaced revisions, ones not adopted) go, then the images of
   * Slipway's earlier builds that nothing uses any more.
   */
  override async tidy(): Promise<void> {
    const { docker } = this.settings;
    const all = await docker.containers({ [LABEL.owner]: this.owner });
    const ours = new Set(await docker.containers({ [LABEL.owner]: this.owner, [LABEL.instance]: this.instance }));
    await docker.remove(all.filter((id) => !ours.has(id) && !this.adopted.has(id)));
    await this.removeStaleImages(runtimeImageTag(this.settings.baseImage));
  }

  private async removeStaleImages(currentRuntimeTag: string): Promise<void> {
    const removed = await removeStaleImages(this.settings.docker, currentRuntimeTag).catch((error: Error) => {
      this.deps.log.warn({ err: error }, "removing the images of Slipway's earlier builds failed");
      return [];
    });
    if (removed.length) this.deps.log.info({ images: removed }, "removed the images of Slipway's earlier builds");
  }

  /** Containers of Slipway's agent server on the revision's build, as the deployment's uid, reached on a socket. */
  private async agentContainers(spec: LaunchSpec, build: NonNullable<LaunchSpec["build"]>, memory: number, internalKey: string) {
    const uid = this.uidOf(spec.deploymentId);
    const python = revisionPython(build.config_file);
    const inImage = python ? pythonInRevision(python, { directory: build.directory, inImage: BUILD_IN_IMAGE }) : undefined;
    const image = await this.revisionImage(spec, build, uid, python?.venv, inImage?.sources ?? []);
    const sockets = this.socketDirectory(spec.deploymentId, uid);
    const storage = await this.containerStorage(spec, uid, sockets);
    if (uid !== process.getuid?.()) for (const dir of storage.directories) await chownTree(dir, uid);
    const env = definedOnly({ ...agentEnvironment(this.deps, spec, storage.env, internalKey, memory, inImage?.env), HOME: "/tmp", TMPDIR: "/tmp" });
    const options = [
      ...this.limits(spec, memory),
      "--label",
      `${LABEL.runtime}=${image.runtimeTag}`,
      "--read-only",
      "--user",
      `${uid}:${uid}`,
      "--workdir",
      BUILD_IN_IMAGE,
      ...[sockets, ...storage.directories].filter(Boolean).flatMap((dir) => ["--volume", `${dir}:${dir}`]),
    ];
    const config = join(BUILD_IN_IMAGE, relative(build.directory, build.config_file));
    return (file: string) => {
      const socketPath = join(sockets, `${file}.sock`);
      const command = [image.node, image.slipway, "agent", "--socket", socketPath, "--config", config, ...storage.args];
      return { options, image: image.tag, command, env, listen: { socketPath } };
    };
  }

  /**
   * The deployment's storage as its containers reach it: the embedded database's socket
   * directory (mounted), or its PostgreSQL role's URL, through a relay socket in its own
   * socket directory when the server is on this machine's loopback (see database-relay.ts).
   */
  private async containerStorage(spec: LaunchSpec, uid: number, sockets: string): Promise<StorageAttachment> {
    const storage = await this.storage.attach(spec.deploymentId, { rotate: spec.rotateCredentials });
    const url = storage.env.SLIPWAY_DATABASE_URL;
    const server = url ? localServer(url) : undefined;
    if (!url || !server) return storage;
    let relay = this.relays.get(spec.deploymentId);
    if (!relay) {
      relay = DatabaseRelay.open(sockets, server, loginRolesOf(spec.deploymentId), uid);
      relay.catch(() => this.relays.delete(spec.deploymentId));
      this.relays.set(spec.deploymentId, relay);
    }
    const opened = await relay;
    spec.log.info(`Storage: PostgreSQL through unix:${opened.socketPath}, as the deployment's own role.`);
    return { ...storage, env: { ...storage.env, SLIPWAY_DATABASE_URL: opened.url(url) } };
  }

  /**
   * Containers of an image source's image (external_docker, internal_docker), as it is:
   * an agent server image in the vendor's contract, serving the agent API and /ok on
   * port 8000 (its PORT), published on a loopback port. It gets the deployment's secrets
   * as its environment (its storage, DATABASE_URI and REDIS_URI among them, is its own)
   * and runs as its image's user, with the same limits.
   */
  private async imageContainers(spec: LaunchSpec, memory: number, internalKey: string) {
    const { docker } = this.settings;
    const image = spec.image ?? "";
    if (!(await docker.hasImage(image))) {
      spec.log.info(`Image ${image} is not on this machine: pulling it.`);
      await docker.run(["pull", image], { timeoutMs: 600_000 }).catch((error: Error) => {
        throw new StepFailure("DEPLOY_FAILED", `Image ${image} is neither on this machine nor could it be pulled: ${error.message}`);
      });
    }
    const env = definedOnly({ ...agentEnvironment(this.deps, spec, {}, internalKey, undefined), PORT: String(IMAGE_PORT) });
    const options = [...this.limits(spec, memory), "--publish", `127.0.0.1::${IMAGE_PORT}`];
    return () => ({ options, image, command: [], env, listen: { containerPort: IMAGE_PORT } });
  }

  /**
   * Stops every container of a deployment being deleted, those a previous control plane
   * left included, and removes its revisions' images (its builds go too).
   */
  override async stopDeployment(deploymentId: string): Promise<void> {
    await super.stopDeployment(deploymentId);
    await this.closeRelay(deploymentId);
    const { docker } = this.settings;
    const labels = { [LABEL.owner]: this.owner, [LABEL.deployment]: deploymentId };
    await docker.remove(await docker.containers(labels));
    const images = await docker.images(labels);
    if (images.length)
      await docker
        .run(["rmi", "--force", ...images])
        .catch((error: Error) => this.deps.log.warn({ err: error, deployment_id: deploymentId }, "removing a deployment's images failed"));
  }

  override async close(): Promise<void> {
    await super.close();
    for (const deploymentId of [...this.relays.keys()]) await this.closeRelay(deploymentId);
    if (this.socketDir) rmSync(this.socketDir, { recursive: true, force: true });
    this.socketDir = undefined;
  }

  /** `docker run` options of every container of a revision: its limits, no capabilities, its labels. */
  private limits(spec: LaunchSpec, memoryMb: number): string[] {
    const { cpus } = replicaShape(spec);
    const labels = {
      [LABEL.owner]: this.owner,
      [LABEL.instance]: this.instance,
      [LABEL.workspace]: spec.workspaceId,
      [LABEL.deployment]: spec.deploymentId,
      [LABEL.revision]: spec.revisionId,
    };
    return [
      "--init",
      "--tmpfs",
      `/tmp:rw,nosuid,nodev,size=${TMP_BYTES},mode=1777`,
      "--cap-drop",
      "ALL",
      "--security-opt",
      "no-new-privileges",
      "--pids-limit",
      String(MAX_PIDS),
      "--memory",
      `${memoryMb}m`,
      "--memory-swap",
      `${memoryMb}m`,
      ...(cpus ? ["--cpus", String(cpus)] : []),
      ...Object.entries(labels).flatMap(([key, value]) => ["--label", `${key}=${value}`]),
    ];
  }

  /** The revision's image: the runtime image and its build (its files the deployment's uid's, as the builder left them); made once per build. */
  private async revisionImage(
    spec: LaunchSpec,
    build: NonNullable<LaunchSpec["build"]>,
    uid: number,
    venv: string | undefined,
    pythonSources: Array<{ host: string; inside: string }>,
  ): Promise<RuntimeImage & { runtimeTag: string }> {
    const { docker } = this.settings;
    try {
      // Once made (a change of Slipway's sources makes a new one), the older ones nothing uses go.
      this.runtimeImage ??= ensureRuntimeImage(docker, this.settings.baseImage).then(async (made) => {
        await this.removeStaleImages(made.tag);
        return made;
      });
      this.runtimeImage.catch(() => (this.runtimeImage = undefined));
      const runtime = await this.runtimeImage;
      const tag = `slipway-revision:${createHash("sha256")
        .update(`${runtime.tag}\0${build.directory}\0${uid}\0${venv ?? ""}`)
        .digest("hex")
        .slice(0, 24)}`;
      if (!(await docker.hasImage(tag))) {
        // Python graphs: the interpreter their environment was made from, once per runtime image.
        const from = venv ? await this.pythonImage(runtime.tag, venv) : runtime.tag;
        spec.log.info(`Building the revision's image ${tag} (${from}, the build${venv ? " and its Python environment" : ""}).`);
        await buildImage(docker, {
          tag,
          from,
          sources: [{ host: build.directory, inside: BUILD_IN_IMAGE }, ...pythonSources],
          // Its own kind: a commit would keep the runtime image's label.
          changes: [`LABEL dev.slipway.kind=revision ${LABEL.owner}=${this.owner} ${LABEL.deployment}=${spec.deploymentId}`],
        });
      }
      return { ...runtime, tag, runtimeTag: runtime.tag };
    } catch (error) {
      throw new StepFailure("DEPLOY_FAILED", `Building the revision's container image failed: ${(error as Error).message}`);
    }
  }

  private async closeRelay(deploymentId: string): Promise<void> {
    const relay = this.relays.get(deploymentId);
    this.relays.delete(deploymentId);
    await (await relay?.catch(() => undefined))?.close();
  }

  private pythonImage(runtimeTag: string, venv: string): Promise<string> {
    const key = `${runtimeTag}\0${venv}`;
    let image = this.pythonImages.get(key);
    if (!image) {
      image = ensurePythonImage(this.settings.docker, runtimeTag, venv);
      image.catch(() => this.pythonImages.delete(key));
      this.pythonImages.set(key, image);
    }
    return image;
  }

  /** Containers of this deployment that a previous control plane of this data directory left. */
  private async removeLeftovers(deploymentId: string): Promise<void> {
    const { docker } = this.settings;
    const ids = await docker.containers({ [LABEL.owner]: this.owner, [LABEL.deployment]: deploymentId });
    if (!ids.length) return;
    const current = new Set(await docker.containers({ [LABEL.owner]: this.owner, [LABEL.deployment]: deploymentId, [LABEL.instance]: this.instance }));
    await docker.remove(ids.filter((id) => !current.has(id) && !this.adopted.has(id)));
  }

  /** The deployment's own uid when the control plane is root (it can give it files); else its own. */
  private uidOf(deploymentId: string): number {
    const own = process.getuid?.() ?? 0;
    return own === 0 ? deploymentUid(deploymentId) : own;
  }

  /**
   * Where a deployment's agent servers listen: a directory of its own, shared with its
   * containers only, in one of this data directory's (the same after a restart: an
   * adopted container's sockets, and its database relay's, stay where it has them).
   */
  private socketDirectory(deploymentId: string, uid: number): string {
    if (!this.socketDir) {
      this.socketDir = join(tmpdir(), `slipway-containers-${this.owner}`);
      mkdirSync(this.socketDir, { recursive: true, mode: 0o700 });
      chmodSync(this.socketDir, 0o700);
    }
    const dir = join(this.socketDir, deploymentId.replace(/-/g, "").slice(0, 16));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (uid !== process.getuid?.()) chownSync(dir, uid, uid);
    return dir;
  }
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/**
 * LANGGRAPH_API_URL is the deployment's URL under the control plane's public URL: on this
 * machine's loopback (no SLIPWAY_PUBLIC_URL, `--host 127.0.0.1`) a container cannot reach
 * it (its loopback is its own). Said in the deploy log rather than hidden: the value is
 * still right for clients on this machine, and graphs that do not call their deployment
 * do not mind.
 */
function warnIfUnreachable(spec: LaunchSpec, publicUrl: string | undefined): void {
  if (!publicUrl) return;
  if (!isLoopbackHost(new URL(publicUrl).hostname)) return;
  spec.log.line(
    "WARNING",
    `LANGGRAPH_API_URL (${publicUrl} and the deployment's path) is on this machine's loopback, which its containers cannot reach: a graph that calls its own deployment must be given SLIPWAY_PUBLIC_URL on an address containers reach (and \`slipway up --host\` listening there).`,
  );
}
