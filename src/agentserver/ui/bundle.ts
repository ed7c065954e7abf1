import { basename, dirname, relative, sep } from "node:path";
import type { Plugin } from "esbuild";
import { GraphLoadError } from "../graphs/load-error.ts";

/** One output file of a bundle: `entrypoint.js`, and `entrypoint.css` when components import CSS. */
export interface UiAsset {
  basename: string;
  contents: Uint8Array;
}

/** Packages the page hands to the components (the SDK's LoadExternalComponent provides them). */
const ALWAYS_SHARED = ["react", "react-dom", "@langchain/langgraph-sdk", "@langchain/langgraph-sdk/react-ui"];

/**
 * The browser global a bundle defines: `__LGUI_<graph id>`, as on the vendor's server,
 * with characters an identifier cannot hold replaced by "_".
 */
export function uiGlobalName(graphId: string): string {
  return `__LGUI_${graphId.replace(/[^A-Za-z0-9]/g, "_")}`;
}

/**
 * Bundles a graph's components file for the browser, once, at start (the vendor's dev
 * server rebuilds on change; a deployment does not change). The entry imports the
 * file's default export (component name -> component) and exports `render(name,
 * shadowRootId)`, which mounts the named component in the shadow root the SDK's
 * LoadExternalComponent prepared, through the store that component registers
 * (`Symbol.for("LGUI_EXT_STORE")`). Shared packages stay out of the bundle; a CommonJS
 * `require` of them goes to the page's `Symbol.for("LGUI_REQUIRE")`.
 */
export async function bundleUi(graphId: string, componentsFile: string, root: string, shared: string[]): Promise<UiAsset[]> {
  let importPath = relative(root, componentsFile).split(sep).join("/");
  if (!importPath.startsWith(".")) importPath = `./${importPath}`;
  const entry: Plugin = {
    name: "slipway-ui-entry",
    setup(b) {
      b.onResolve({ filter: /^slipway-ui-entry$/ }, () => ({ path: `${dirname(componentsFile)}/ui.entry.tsx`, namespace: "slipway-ui" }));
      b.onLoad({ filter: /.*/, namespace: "slipway-ui" }, () => ({ contents: entrySource(importPath), loader: "tsx", resolveDir: root }));
    },
  };
  try {
    // Loaded only by projects with a `ui` section.
    const { build } = await import("esbuild");
    const result = await build({
      entryPoints: ["slipway-ui-entry"],
      outdir: `${root}/.slipway-ui/${graphId}`,
      entryNames: "entrypoint",
      bundle: true,
      write: false,
      platform: "browser",
      target: "es2020",
      jsx: "automatic",
      format: "iife",
      globalName: uiGlobalName(graphId),
      external: [...ALWAYS_SHARED, ...shared],
      plugins: [entry],
      logLevel: "silent",
    });
    return result.outputFiles.map((file) => {
      const name = basename(file.path);
      if (!name.endsWith(".js")) return { basename: name, contents: file.contents };
      // esbuild's shim for an external `require` looks for a global `require`; the page provides LGUI_REQUIRE.
      const text = file.text.replaceAll(
        `typeof require !== "undefined" ? require`,
        `typeof globalThis[Symbol.for("LGUI_REQUIRE")] !== "undefined" ? globalThis[Symbol.for("LGUI_REQUIRE")]`,
      );
      return { basename: name, contents: new TextEncoder().encode(text) };
    });
  } catch (error) {
    const detail = (error as { errors?: Array<{ text: string; location?: { file: string; line: number } | null }> }).errors
      ?.map((e) => (e.location ? `${e.location.file}:${e.location.line}: ${e.text}` : e.text))
      .join("; ");
    throw new GraphLoadError(`ui.${graphId}: bundling ${componentsFile} failed: ${detail || (error as Error).message}`, {
      graphId,
      file: componentsFile,
      cause: error,
    });
  }
}

function entrySource(importPath: string): string {
  return [
    `import components from ${JSON.stringify(importPath)};`,
    `export function render(name, shadowRootId) {`,
    `  const host = document.getElementById(shadowRootId);`,
    `  const root = host && host.shadowRoot;`,
    `  if (!root) throw new Error("no shadow root with id " + shadowRootId);`,
    `  const target = document.createElement("div");`,
    `  root.appendChild(target);`,
    `  window[Symbol.for("LGUI_EXT_STORE")].respond(shadowRootId, components[name], target);`,
    `}`,
  ].join("\n");
}
