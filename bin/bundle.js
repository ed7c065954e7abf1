// Slipway's own sources as one prebuilt JavaScript file (decision 0041). Loading ~360
// TypeScript modules through tsx's loader thread costs seconds at every start of an agent
// process, a control plane or a CLI command; the bundle loads in a fraction of that. It
// is rebuilt when the sources change (a hash of their contents, so a copied tree stays
// valid), and whoever cannot build or read it runs from the sources as before.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const SOURCES = join(ROOT, "src");
const DIST = join(ROOT, "dist");

/** The bundle's entry when one matches the sources (built now if it can be), else undefined. */
export async function freshBundle() {
  if (process.env.SLIPWAY_FROM_SOURCES === "1") return undefined;
  try {
    // One directory per state of the sources, named by their hash: a process never sees
    // another's half-written build, nor a build of other sources.
    const dir = join(DIST, sourcesKey().slice(0, 24));
    const entry = join(dir, "index.js");
    if (!existsSync(entry)) await build(dir);
    return entry;
  } catch {
    // A read-only install (a sandboxed agent, a container) or no esbuild: run from sources.
    return undefined;
  }
}

/**
 * Packages compiled into the bundle instead of imported from node_modules: ES modules of
 * many small files that every start loads (typebox's 200, uuid's 21). One parse of the
 * parts used costs less than a module load per file (decision 0053).
 */
const BUNDLED_PACKAGES = ["@sinclair/typebox", "uuid"];

/**
 * A hash of every source file the CLI may load (tests left out), of package.json, of this
 * builder and of the bundled packages' manifests (their version is in the bundle).
 */
function sourcesKey() {
  const hash = createHash("sha256");
  const manifests = BUNDLED_PACKAGES.map((name) => join(ROOT, "node_modules", name, "package.json"));
  const files = [join(ROOT, "package.json"), fileURLToPath(import.meta.url), ...manifests, ...listSources(SOURCES)].sort();
  for (const file of files) hash.update(relative(ROOT, file)).update("\0").update(readFileSync(file)).update("\0");
  return hash.digest("hex");
}

function listSources(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...listSources(path));
    else if (/\.(ts|mjs|js|json)$/.test(entry.name) && !entry.name.endsWith(".test.ts")) found.push(path);
  }
  return found;
}

async function build(dir) {
  const { build: esbuild } = await import("esbuild");
  // Several processes may build at once (a test suite starting many): each builds in a
  // directory of its own and renames it into place; the first rename wins.
  const temporary = `${dir}.${process.pid}.tmp`;
  try {
    await esbuild({
      entryPoints: { index: join(SOURCES, "cli/index.ts") },
      outdir: temporary,
      // Commands load their modules (and so their packages) when they run: in chunks.
      splitting: true,
      chunkNames: "[name]-[hash]",
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      keepNames: true,
      sourcemap: "linked",
      sourceRoot: "",
      logLevel: "silent",
      plugins: [externalPackages, keepModuleUrls(dir)],
    });
    writeFileSync(join(temporary, "package.json"), '{"type":"module"}\n');
    try {
      renameSync(temporary, dir);
    } catch (error) {
      if (!existsSync(join(dir, "index.js"))) throw error;
    }
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
  removeOldBuilds(dir);
}

/** Builds of earlier sources, left a day ago or more (a process started then may still load their chunks). */
function removeOldBuilds(current) {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const entry of readdirSync(DIST, { withFileTypes: true })) {
    const path = join(DIST, entry.name);
    if (!entry.isDirectory() || path === current) continue;
    try {
      if (statSync(path).mtimeMs < dayAgo) rmSync(path, { recursive: true, force: true });
    } catch {
      // Removed by another process meanwhile.
    }
  }
}

/** Every package but BUNDLED_PACKAGES stays an import of node_modules (esbuild's `packages: "external"`, but for those). */
const externalPackages = {
  name: "external-packages",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind === "entry-point") return undefined;
      const bundled = BUNDLED_PACKAGES.some((name) => args.path === name || args.path.startsWith(`${name}/`));
      return bundled ? undefined : { path: args.path, external: true };
    });
  },
};

/**
 * Modules find files beside them through `import.meta.url` (worker threads, migrations,
 * the Python worker, package.json). In the bundle each keeps its own source file's URL,
 * written relative to the bundle, so a copied tree (a container's /opt/slipway) still works.
 */
const keepModuleUrls = (dir) => ({
  name: "keep-module-urls",
  setup(build) {
    build.onLoad({ filter: /\.(ts|mjs)$/ }, (args) => {
      if (!args.path.startsWith(SOURCES)) return undefined;
      const fromBundle = relative(dir, args.path).split("\\").join("/");
      const source = readFileSync(args.path, "utf8").replaceAll("import.meta.url", `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`);
      return { contents: source, loader: args.path.endsWith(".ts") ? "ts" : "js" };
    });
  },
});
