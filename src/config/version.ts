import { createRequire } from "node:module";

/** Slipway's version, read once from its package.json (the CLI, both servers' /info and OpenAPI). */
export const SLIPWAY_VERSION: string = createRequire(import.meta.url)("../../package.json").version;
