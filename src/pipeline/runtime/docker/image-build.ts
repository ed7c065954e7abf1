import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import type { Readable } from "node:stream";
import type { DockerCli } from "./docker-cli.ts";

export interface ImageRecipe {
  tag: string;
  /** The image it starts from; none for an image made of these files only. */
  from?: string;
  /** Host paths copied in, at `inside` or else at the same absolute path. */
  sources: Array<{ host: string; inside?: string }>;
  /** Files written for the image only (absolute path inside → content), e.g. a minimal /etc/passwd. */
  files?: Record<string, string>;
  /** Follow symlinks among the sources (a node_modules that is a link to another checkout). */
  dereference?: boolean;
  /** Host paths under the sources left out (a Python installation's own site-packages and tests). */
  exclude?: string[];
  /** Dockerfile instructions for its configuration (ENV, WORKDIR, LABEL). */
  changes?: string[];
}

/**
 * Makes an image of local files only (no registry is needed): `tar` (argument arrays)
 * streams the files into `docker import` (an image of its own) or, on top of another
 * image, into a created container (`docker cp -`), which is committed. One extraction:
 * several times faster here than `docker build`, which unpacks its context and then
 * copies it again.
 */
export async function buildImage(docker: DockerCli, recipe: ImageRecipe): Promise<void> {
  const staging = mkdtempSync(join(tmpdir(), "slipway-image-"));
  try {
    const members = stage(staging, recipe);
    const changes = (recipe.changes ?? []).flatMap((change) => ["--change", change]);
    if (!recipe.from) {
      await withTar(members, recipe, (input) => docker.run(["import", ...changes, "-", recipe.tag], { input }));
      return;
    }
    const container = `slipway-image-${randomBytes(6).toString("hex")}`;
    await docker.run(["create", "--name", container, recipe.from, "/nonexistent"]);
    try {
      await withTar(members, recipe, (input) => docker.run(["cp", "--archive", "-", `${container}:/`], { input }));
      await docker.run(["commit", ...changes, container, recipe.tag]);
    } finally {
      await docker.remove([container]);
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Lays out the image's tree in `staging`: generated files as files, a source placed
 * elsewhere as a symlink at its place (tar follows a link in the middle of a path), and
 * returns the paths to pack, relative to `staging` or to `/`.
 */
function stage(staging: string, recipe: ImageRecipe): Array<{ from: string; path: string }> {
  const members: Array<{ from: string; path: string }> = [];
  for (const [path, content] of Object.entries(recipe.files ?? {})) {
    const inside = relative("/", path);
    mkdirSync(dirname(join(staging, inside)), { recursive: true });
    writeFileSync(join(staging, inside), content);
    members.push({ from: staging, path: inside });
  }
  for (const source of recipe.sources) {
    if (!source.inside) {
      members.push({ from: "/", path: relative("/", source.host) });
      continue;
    }
    const inside = relative("/", source.inside);
    mkdirSync(dirname(join(staging, inside)), { recursive: true });
    if (!statSync(source.host).isDirectory()) {
      // A file placed elsewhere (a library at the path its loader looks for): its content, not a link to it.
      copyFileSync(source.host, join(staging, inside));
      members.push({ from: staging, path: inside });
      continue;
    }
    symlinkSync(source.host, join(staging, inside));
    // A directory's entries, through the link: its own links inside stay links.
    members.push(...readdirSync(source.host).map((entry) => ({ from: staging, path: join(inside, entry) })));
  }
  return members;
}

async function withTar<T>(members: Array<{ from: string; path: string }>, recipe: ImageRecipe, use: (input: Readable) => Promise<T>): Promise<T> {
  // Exclusions match member names (relative to /), anchored: before the members they apply to.
  const excluded = (recipe.exclude ?? []).map((path) => `--exclude=${relative("/", path)}`);
  const args = ["-c", "-f", "-", ...(recipe.dereference ? ["-h"] : []), "--anchored", ...excluded];
  let from: string | undefined;
  for (const member of members) {
    if (member.from !== from) args.push("-C", (from = member.from));
    // A member name tar cannot take for an option.
    args.push(member.path.startsWith("-") ? `./${member.path}` : member.path);
  }
  const tar = spawn("tar", args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  tar.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-4_000)));
  const done = new Promise<number | null>((resolve) => tar.once("close", resolve));
  let result: T;
  try {
    result = await use(tar.stdout);
  } catch (error) {
    throw (await done) ? new Error(`packing the image's files failed: ${stderr.trim()}`) : error;
  }
  if ((await done) !== 0) throw new Error(`packing the image's files failed: ${stderr.trim()}`);
  return result;
}
