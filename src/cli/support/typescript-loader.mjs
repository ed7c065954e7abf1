// @ts-check
// tsx's loader, registered once per process (by `slipway agent`, before it loads a project) for users' code: graphs,
// auth and http modules written in TypeScript, CommonJS or ES modules. Plain JavaScript,
// because bin/slipway.js needs it before any TypeScript can load. Both of tsx's hooks: a
// TypeScript file in a project without "type": "module" is CommonJS, and with the ES
// module hook alone Node fails it with "Cannot require() ES Module ... in a cycle", a
// message that hides the graph's own errors too.
// tsx (and esbuild with it) is imported only here, when registered: a project without
// TypeScript never loads it, nor starts the thread its ES module hooks run on (decision 0053).

const REGISTERED = Symbol.for("slipway.typescript-loader");

export async function registerTypeScriptLoader() {
  const global = /** @type {Record<symbol, boolean>} */ (/** @type {unknown} */ (globalThis));
  if (global[REGISTERED]) return;
  global[REGISTERED] = true;
  const [{ register: registerCommonJs }, { register }] = await Promise.all([import("tsx/cjs/api"), import("tsx/esm/api")]);
  registerCommonJs();
  register();
}
