import { createRequire } from "node:module";

/** Slipway's version, read once from its package.json (the CLI, both servers' /info and OpenAPI). */
export const SLIPWAY_VERSION: string = createRequire(import.meta.url)("../../package.json").version;

/** The LangGraph.js library the agent server runs graphs with (/info, and each run's metadata). */
export const LANGGRAPH_JS_VERSION: string = createRequire(import.meta.url)("@langchain/langgraph/package.json").version;
