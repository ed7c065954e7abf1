import { join, relative } from "node:path";
import { readLanggraphConfig, type LanggraphConfig } from "../langgraph-config.ts";
import { projectNeedsTypeScript, serverModules } from "../typescript-sources.ts";
import { compileKey, currentManifest, writeManifest, type CompiledManifest } from "./compiled-manifest.ts";
import { useCompiledModules } from "./compiled-modules.ts";

/**
 * How this process loads the project's modules: as they are (plain JavaScript), from
 * their compiled JavaScript, or through tsx's loader (`reason` says why, when it was not asked for).
 */
export type TypeScriptMode = { kind: "javascript" } | { kind: "compiled"; root: string } | { kind: "loader"; reason?: string };

/**
 * Decision 0056: a project that may load TypeScript runs from its compiled form, made by
 * the build's check (or at the first start of `slipway agent`) and reused while its
 * inputs are unchanged. SLIPWAY_TYPESCRIPT=loader keeps tsx's loader, as before.
 */
export async function chooseTypeScriptMode(configPath: string): Promise<TypeScriptMode> {
  let config: LanggraphConfig;
  try {
    config = readLanggraphConfig(configPath);
  } catch {
    // The start reads it again and says what is wrong.
    return { kind: "loader" };
  }
  if (!projectNeedsTypeScript(config)) return { kind: "javascript" };
  if (process.env.SLIPWAY_TYPESCRIPT === "loader") return { kind: "loader" };
  const manifest = currentManifest(config.root);
  const reused = manifest && coversModules(config, manifest) ? manifest : undefined;
  if (reused?.fallback) return { kind: "loader", reason: reused.fallback };
  let ready = reused;
  if (!ready) {
    const outcome = await compileSafely(config);
    if (!outcome.ok) return { kind: "loader", reason: outcome.reason };
    ready = outcome.manifest;
  }
  useCompiledModules(new Map(Object.entries(ready.modules).map(([original, compiled]) => [join(config.root, original), join(config.root, compiled)])));
  return { kind: "compiled", root: config.root };
}

/** The compiled form failed the check (the caller already loads the sources): later starts use tsx, and say why. */
export function recordFallback(root: string, reason: string): void {
  const manifest = currentManifest(root);
  if (!manifest) return;
  try {
    writeManifest(root, { ...manifest, fallback: reason });
  } catch {
    // A read-only build: this process goes on with tsx all the same.
  }
}

function coversModules(config: LanggraphConfig, manifest: CompiledManifest): boolean {
  return serverModules(config).every((file) => relative(config.root, file) in manifest.modules || manifest.fallback !== undefined);
}

/** A compile that cannot write (a read-only build) or fails is a reason to use tsx, never a failed start. */
async function compileSafely(config: LanggraphConfig) {
  try {
    const { compileProject } = await import("./compile-project.ts");
    const outcome = await compileProject(config);
    if (!outcome.ok) {
      try {
        writeManifest(config.root, {
          key: compileKey(config.root, outcome.files),
          files: outcome.files.map((f) => relative(config.root, f)),
          modules: {},
          fallback: outcome.reason,
        });
      } catch {
        // Read-only: compiled again (and failing again) at the next start.
      }
    }
    return outcome;
  } catch (error) {
    return { ok: false as const, reason: `compiling failed: ${(error as Error).message ?? String(error)}` };
  }
}
