import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { DockerCli } from "./docker-cli.ts";
import { buildImage } from "./image-build.ts";

const SLIPWAY_ROOT = realpathSync(fileURLToPath(new URL("../../../../", import.meta.url)));
/** Tells this checkout's (or installation's) images from those of another Slipway on the same dockerd. */
export const SLIPWAY_ROOT_ID = createHash("sha256").update(SLIPWAY_ROOT).digest("hex").slice(0, 16);
/**
 * Labels of the runtime image, which every image made on it (python layers, revisions)
 * inherits: which Slipway made it, and on which runtime image (stale-images.ts removes
 * those of older runtime images).
 */
export const IMAGE_LABEL = { kind: "dev.slipway.kind", root: "dev.slipway.root", runtime: "dev.slipway.runtime" };
/** What of Slipway an agent server needs (what the local sandbox shows too). */
const SLIPWAY_ENTRIES = ["bin", "dist", "src", "package.json", "node_modules"];
/** Where Slipway is in the image: not its host path, which may lie under /tmp (a private tmpfs in a container). */
const SLIPWAY_IN_IMAGE = "/opt/slipway";
const SLIPWAY_BIN_IN_IMAGE = `${SLIPWAY_IN_IMAGE}/bin/slipway.js`;
const MINIMAL_ETC: Record<string, string> = {
  "/etc/passwd": "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n",
  "/etc/group": "root:x:0:\nnogroup:x:65534:\n",
  "/etc/nsswitch.conf": "passwd: files\ngroup: files\nhosts: files dns\n",
};

/** The image every revision starts from, and the node that runs the agent server in it. */
export interface RuntimeImage {
  tag: string;
  node: string;
  /** `slipway` in it (bin/slipway.js). */
  slipway: string;
}

/**
 * The image every revision's image is built on: a base (the operator's `--docker-base-image`,
 * which must have Node 20 or later as `node` on its PATH; else one made here of the
 * host's own node binary, /bin/sh, env and sleep, and the shared libraries `ldd` lists:
 * no registry is needed)
 * with this Slipway's agent server added in /opt/slipway. Built once
 * per Slipway version and base; its tag says which.
 */
export async function ensureRuntimeImage(docker: DockerCli, baseImage: string | undefined): Promise<RuntimeImage> {
  const node = baseImage ? "node" : realpathSync(process.execPath);
  const tag = runtimeImageTag(baseImage);
  if (await docker.hasImage(tag)) return { tag, node, slipway: SLIPWAY_BIN_IN_IMAGE };
  const slipway = SLIPWAY_ENTRIES.filter((entry) => existsSync(join(SLIPWAY_ROOT, entry))).map((entry) => ({
    host: join(SLIPWAY_ROOT, entry),
    inside: `${SLIPWAY_IN_IMAGE}/${entry}`,
  }));
  const programs = [node, ...SHELL_PROGRAMS.filter((path) => existsSync(path))];
  const system = baseImage ? [] : [...new Set([...programs, ...sharedLibraries(...programs), ...certificates()])].map((host) => ({ host }));
  await buildImage(docker, {
    tag,
    from: baseImage,
    sources: [...system, ...slipway],
    files: baseImage ? {} : MINIMAL_ETC,
    dereference: true,
    changes: [
      ...(baseImage ? [] : ["ENV PATH=/usr/local/bin:/usr/bin:/bin"]),
      `LABEL ${IMAGE_LABEL.kind}=runtime ${IMAGE_LABEL.root}=${SLIPWAY_ROOT_ID} ${IMAGE_LABEL.runtime}=${tag}`,
    ],
  });
  return { tag, node, slipway: SLIPWAY_BIN_IN_IMAGE };
}

/** The tag of the runtime image of this Slipway (its sources, dependencies and node) on this base, made or not. */
export function runtimeImageTag(baseImage: string | undefined): string {
  return `slipway-runtime:${fingerprint(baseImage ?? realpathSync(process.execPath))}`;
}

/** Besides node, what graphs commonly start: a POSIX shell, env and sleep (the rest is the operator's base image's). */
const SHELL_PROGRAMS = ["/bin/sh", "/usr/bin/env", "/bin/sleep"];

/** The libraries `ldd` says the binaries load (the dynamic loader included). */
export function sharedLibraries(...binaries: string[]): string[] {
  if (!binaries.length) return [];
  let out: string;
  try {
    out = execFileSync("ldd", binaries, { encoding: "utf8", maxBuffer: 16 << 20, stdio: ["ignore", "pipe", "ignore"] });
  } catch (error) {
    // One of them is not dynamically linked (a static extension): the others' lines still count.
    out = String((error as { stdout?: string }).stdout ?? "");
  }
  return [...new Set([...out.matchAll(/(\/\S+) \(0x/g)].map((match) => match[1]))];
}

function certificates(): string[] {
  return ["/etc/ssl/certs/ca-certificates.crt"].filter((path) => existsSync(path));
}

/** Changes with the base, the node binary, Slipway's dependencies and its sources. */
function fingerprint(base: string): string {
  const hash = createHash("sha256").update(base).update(process.version).update(SLIPWAY_ROOT);
  for (const file of ["package.json", "package-lock.json"]) {
    const path = join(SLIPWAY_ROOT, file);
    if (existsSync(path)) hash.update(readFileSync(path));
  }
  for (const dir of ["bin", "src"]) hashTree(hash, join(SLIPWAY_ROOT, dir));
  return hash.digest("hex").slice(0, 16);
}

function hashTree(hash: ReturnType<typeof createHash>, dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) hashTree(hash, path);
    else if (entry.isFile()) {
      const stat = statSync(path);
      hash.update(`${path}\0${stat.size}\0${stat.mtimeMs}\0`);
    }
  }
}
