import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import type { Metafile, Plugin } from "esbuild";
import type { LanggraphConfig } from "../langgraph-config.ts";
import { outside, serverModules } from "../typescript-sources.ts";
import { COMPILED_DIR, compileKey, writeManifest, type CompiledManifest } from "./compiled-manifest.ts";
import { choosePlace, type PackageImport } from "./output-place.ts";

export type CompileOutcome = { ok: true; manifest: CompiledManifest } | { ok: false; reason: string; files: string[] };

/**
 * Compiles the modules the server imports (graphs, auth.path, http.app, store.index.embed)
 * and the project files they import into JavaScript, once: one esbuild build with an entry
 * per module and code splitting, so a module two graphs share stays one instance. Packages
 * stay external (Node loads the project's own node_modules, the same copies the server
 * sees), each file keeps its own `import.meta.url`, `__dirname` and `__filename`, and the
 * output lies where Node finds every package as it does from the sources (decision 0056).
 */
export async function compileProject(config: LanggraphConfig): Promise<CompileOutcome> {
  const root = config.root;
  const entries = serverModules(config);
  const named = [join(root, "langgraph.json"), ...entries];
  const far = entries.find((file) => outside(root, file));
  if (far) return { ok: false, reason: `${far} lies outside the project's directory`, files: named };
  const commonjs = entries.find(isCommonJs);
  if (commonjs) return { ok: false, reason: `${relative(root, commonjs)} is a CommonJS module`, files: named };
  const { build } = await import("esbuild");
  let metafile: Metafile;
  try {
    ({ metafile } = await build({ ...baseOptions(root, entries), outdir: join(root, COMPILED_DIR, "probe"), write: false, metafile: true }));
  } catch (error) {
    // The file at fault joins the key: the next start tries again once it is edited.
    const at = (error as { errors?: { location?: { file: string } | null }[] }).errors?.[0]?.location?.file;
    return { ok: false, reason: firstError(error), files: at ? [...named, resolve(root, at)] : named };
  }
  const inputs = Object.keys(metafile.inputs).map((path) => resolve(root, path));
  const files = [...new Set([...named, ...inputs, ...configFiles(root, inputs)])];
  const cjs = inputs.find(isCommonJs);
  if (cjs) return { ok: false, reason: `${relative(root, cjs)} is a CommonJS module`, files };
  const place = choosePlace(root, packageImports(root, metafile));
  if (!place) return { ok: false, reason: "the project's modules find different copies of one package in different node_modules folders", files };
  const key = compileKey(root, files);
  const outDir = join(place, COMPILED_DIR, key);
  const temporary = `${outDir}.${process.pid}.tmp`;
  let outputs: Metafile["outputs"];
  try {
    rmSync(temporary, { recursive: true, force: true });
    ({
      metafile: { outputs },
    } = await build({
      ...baseOptions(root, entries),
      outdir: temporary,
      write: true,
      metafile: true,
      sourcemap: "linked",
      banner: { js: BANNER },
      define: KEPT_PER_FILE,
      plugins: [keepFileLocations(outDir)],
    }));
    writeFileSync(join(temporary, "package.json"), '{"type":"module"}\n');
    rmSync(outDir, { recursive: true, force: true });
    renameSync(temporary, outDir);
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true });
    return { ok: false, reason: firstError(error), files };
  }
  const modules: Record<string, string> = {};
  for (const [output, meta] of Object.entries(outputs)) {
    if (!meta.entryPoint) continue;
    const compiled = join(outDir, relative(temporary, resolve(root, output)));
    modules[relative(root, resolve(root, meta.entryPoint))] = relative(root, compiled);
  }
  const manifest: CompiledManifest = { key, files: files.map((file) => relative(root, file)), modules };
  writeManifest(root, manifest);
  return { ok: true, manifest };
}

function baseOptions(root: string, entries: string[]) {
  return {
    absWorkingDir: root,
    entryPoints: entries,
    entryNames: "[name]-[hash]",
    chunkNames: "chunk-[hash]",
    bundle: true,
    splitting: true,
    format: "esm" as const,
    platform: "node" as const,
    target: `node${process.versions.node.split(".")[0]}`,
    packages: "external" as const,
    keepNames: true,
    logLevel: "silent" as const,
  };
}

/** Spelled in two parts: Slipway's own bundle rewrites that expression wherever it is written (bin/bundle.js). */
const META = ["import", "meta"].join(".");

/** Each output chunk: `require` for the project's own require() calls, and what the per-file header uses. */
const BANNER = [
  'import { createRequire as __slipwayCreateRequire } from "node:module";',
  'import { fileURLToPath as __slipwayToPath } from "node:url";',
  'import { dirname as __slipwayDirname } from "node:path";',
  `const __slipwayOutUrl = ${META}.url;`,
  `const require = __slipwayCreateRequire(${META}.url);`,
].join(" ");

/** Bound in each file by its header (esbuild's define leaves a file's own declarations alone). */
const KEPT_PER_FILE = {
  [`${META}.url`]: "__slipway_url",
  [`${META}.filename`]: "__slipway_filename",
  [`${META}.dirname`]: "__slipway_dirname",
  __filename: "__slipway_filename",
  __dirname: "__slipway_dirname",
};

const LOADERS: Record<string, "ts" | "tsx" | "js" | "jsx"> = { ".ts": "ts", ".mts": "ts", ".tsx": "tsx", ".js": "js", ".mjs": "js", ".jsx": "jsx" };

/**
 * A file that asks where it is (a prompt file beside a graph) gets its own original
 * location, written relative to the output so the build folder may move (a build is
 * renamed into place after its check). The header shares the file's first line: line
 * numbers stay the source's.
 */
function keepFileLocations(outDir: string): Plugin {
  return {
    name: "keep-file-locations",
    setup(build) {
      build.onLoad({ filter: /\.(m?ts|tsx|m?js|jsx)$/ }, (args) => {
        if (args.path.split(sep).includes("node_modules")) return undefined;
        const loader = LOADERS[extname(args.path)];
        if (!loader) return undefined;
        const source = readFileSync(args.path, "utf8");
        if (!/import\.meta|__dirname|__filename/.test(source)) return { contents: source, loader };
        const fromOutput = relative(outDir, args.path).split(sep).join("/");
        const header =
          `var __slipway_url = new URL(${JSON.stringify(fromOutput)}, __slipwayOutUrl).href, ` +
          "__slipway_filename = __slipwayToPath(__slipway_url), __slipway_dirname = __slipwayDirname(__slipway_filename);";
        const shebang = source.startsWith("#!") ? source.indexOf("\n") + 1 : 0;
        return { contents: source.slice(0, shebang) + header + source.slice(shebang), loader };
      });
    },
  };
}

function packageImports(root: string, metafile: Metafile): PackageImport[] {
  const found: PackageImport[] = [];
  for (const [input, meta] of Object.entries(metafile.inputs)) {
    for (const imported of meta.imports) {
      if (imported.external) found.push({ importer: resolve(root, input), specifier: imported.original ?? imported.path });
    }
  }
  return found;
}

/** tsconfig and package.json files from each input's folder up to the root: they change how it compiles. */
function configFiles(root: string, inputs: string[]): string[] {
  const found = new Set<string>();
  for (const input of inputs) {
    for (let dir = dirname(input); !outside(root, dir); dir = dirname(dir)) {
      for (const name of ["tsconfig.json", "package.json"]) if (existsSync(join(dir, name))) found.add(join(dir, name));
      if (dir === root) break;
    }
  }
  return [...found];
}

/** A CommonJS module: tsx compiles it to CommonJS and it requires the CommonJS builds of packages; left to tsx. */
function isCommonJs(file: string): boolean {
  const ext = extname(file);
  if (ext === ".cts" || ext === ".cjs") return true;
  if (ext === ".mts" || ext === ".mjs") return false;
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      try {
        return (JSON.parse(readFileSync(manifest, "utf8")) as { type?: unknown }).type !== "module";
      } catch {
        return true;
      }
    }
    if (dirname(dir) === dir) return true;
  }
}

function firstError(error: unknown): string {
  const errors = (error as { errors?: { text: string; location?: { file: string; line: number } | null }[] }).errors;
  const first = errors?.[0];
  if (first) return first.location ? `${first.location.file}:${first.location.line}: ${first.text}` : first.text;
  return error instanceof Error ? error.message : String(error);
}
