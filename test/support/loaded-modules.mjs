// Preloaded into a child process (NODE_OPTIONS=--import <this file>) to tell a test which
// modules it has loaded: ES modules through a load hook (which runs on a thread of its own
// and reports here), CommonJS ones from require's cache. On SIGUSR2 the list is written
// as JSON to SLIPWAY_TEST_MODULES_FILE.
import { renameSync, writeFileSync } from "node:fs";
import { createRequire, register } from "node:module";
import { MessageChannel } from "node:worker_threads";

const out = process.env.SLIPWAY_TEST_MODULES_FILE;
const esm = new Set();
const { port1, port2 } = new MessageChannel();
port1.on("message", (url) => esm.add(url));
port1.unref();
register(new URL("./loaded-modules-hooks.mjs", import.meta.url), { data: { port: port2 }, transferList: [port2] });

process.on("SIGUSR2", () => {
  const cjs = Object.keys(createRequire(import.meta.url).cache);
  writeFileSync(`${out}.partial`, JSON.stringify({ modules: [...esm, ...cjs.map((path) => `file://${path}`)] }));
  // Renamed into place: the test never reads half a list.
  renameSync(`${out}.partial`, out);
});
