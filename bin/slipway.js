#!/usr/bin/env node
// Slipway's own code runs from a prebuilt bundle of its sources when there is a current
// one (bin/bundle.js), else from the TypeScript sources through tsx's loader. Users'
// TypeScript is compiled once and loaded as JavaScript (decision 0056); tsx's loader
// (src/cli/support/typescript-loader.mjs) is `slipway agent`'s fallback for it.
import { freshBundle } from "./bundle.js";
import { registerTypeScriptLoader } from "../src/cli/support/typescript-loader.mjs";

const bundle = await freshBundle();
if (bundle) {
  // Node parses the map of every module it loads once maps are on, and keeps it: about
  // 12 MB in each process (decision 0058). Stack traces name the bundle's chunks and
  // functions without them; SLIPWAY_SOURCE_MAPS=1 (or node's --enable-source-maps) maps
  // them back to src/.
  if (process.env.SLIPWAY_SOURCE_MAPS === "1") process.setSourceMapsEnabled(true);
  await import(bundle);
} else {
  await registerTypeScriptLoader();
  await import("../src/cli/index.ts");
}
