import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The project the pipeline tests deploy: the repository's example agent (a LangGraph.js
 * graph `agent` with a lock file), plus two graphs the tests need: `slow` (runs as long
 * as asked, to hold a stream open across a switch) and `whoami` (which code version
 * serves, a secret it sees, and where it is told its server is).
 */
export const EXAMPLE_AGENT = fileURLToPath(new URL("../../examples/agent/", import.meta.url));

export function sampleFiles(version: string): Record<string, string> {
  return {
    "langgraph.json": JSON.stringify(
      { node_version: "20", graphs: { agent: "./src/agent.ts:graph", slow: "./src/slow.ts:slow", whoami: "./src/whoami.ts:whoami" }, env: {} },
      null,
      2,
    ),
    "src/version.ts": `export const VERSION = ${JSON.stringify(version)};\n`,
    "src/whoami.ts": [
      'import { getHeapStatistics } from "node:v8";',
      'import { Annotation, END, START, StateGraph } from "@langchain/langgraph";',
      'import { VERSION } from "./version.ts";',
      "const State = Annotation.Root({ version: Annotation<string>, greeting: Annotation<string>, api_url: Annotation<string>, pid: Annotation<number>, heap_mb: Annotation<number> });",
      "export const whoami = new StateGraph(State)",
      '  .addNode("ask", async () => ({',
      "    version: VERSION,",
      '    greeting: process.env.GREETING ?? "(none)",',
      '    api_url: process.env.LANGGRAPH_API_URL ?? "(none)",',
      "    pid: process.pid,",
      "    heap_mb: Math.round(getHeapStatistics().heap_size_limit / 1024 / 1024),",
      "  }))",
      '  .addEdge(START, "ask")',
      '  .addEdge("ask", END)',
      "  .compile();",
      "",
    ].join("\n"),
    "src/slow.ts": [
      'import { Annotation, END, START, StateGraph } from "@langchain/langgraph";',
      "const State = Annotation.Root({",
      "  steps: Annotation<number>,",
      "  delay_ms: Annotation<number>,",
      "  release_key: Annotation<string | undefined>,",
      "  ticks: Annotation<number[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),",
      "});",
      "export const slow = new StateGraph(State)",
      '  .addNode("tick", async (state, config) => {',
      "    await new Promise((resolve) => setTimeout(resolve, state.delay_ms ?? 200));",
      '    // With release_key, it goes on ticking until the store holds ["release"]/<key>: the test says',
      "    // when it ends (through the deployment's API: the sandbox shows the graph none of the test's files).",
      '    const held = state.release_key !== undefined && !(await config.store?.get(["release"], state.release_key));',
      "    return { steps: held ? Math.max(state.steps, 1) : state.steps - 1, ticks: [state.steps] };",
      "  })",
      '  .addEdge(START, "tick")',
      '  .addConditionalEdges("tick", (state) => (state.steps > 0 ? "tick" : END))',
      "  .compile();",
      "",
    ].join("\n"),
  };
}

/** Writes the sample project (example agent + test graphs) into `dir`. */
export function writeSampleProject(dir: string, version: string): void {
  mkdirSync(dir, { recursive: true });
  cpSync(EXAMPLE_AGENT, dir, { recursive: true, filter: (source) => !source.includes("node_modules") });
  for (const [path, content] of Object.entries(sampleFiles(version))) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}
