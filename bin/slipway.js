#!/usr/bin/env node
// Slipway ships TypeScript sources and runs them through tsx's loader, so users'
// graphs written in TypeScript load the same way without a build step. Both of tsx's
// hooks: a TypeScript file in a project without "type": "module" is CommonJS, and
// with the ES module hook alone Node fails it with "Cannot require() ES Module ... in
// a cycle", a message that hides the graph's own errors too.
import { register as registerCommonJs } from "tsx/cjs/api";
import { register } from "tsx/esm/api";

registerCommonJs();
register();
await import("../src/cli/index.ts");
