import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnAgent, type AgentProcess } from "../support/agent-process.ts";
import { freshBackend } from "../support/backends.ts";
import { CHECKS, runVersionChecks, type CheckResults } from "../support/version-checks.ts";
import { hasCommand, installedLanggraph, libraryGaps, linesToRun, versionProject, type VersionLine } from "../support/version-projects.ts";

/**
 * Issue 25, item 2: one small project per LangGraph.js line (test/fixtures/version-matrix),
 * installed from the npm registry into a cache outside the clone (reused by later runs),
 * served by a real `slipway agent` each, and put through the official SDK: wait,
 * three stream modes, state, history, an interrupt and its resume, a subgraph, the
 * schemas and the run metadata. Two lines at a time: the machine has two cores.
 */
const results = new Map<string, CheckResults | Error>();
// Under CI three lines only; SLIPWAY_VERSION_MATRIX_ALL=1 or _ONLY=0.2.8,1.7.3 choose (linesToRun).
const LINES = linesToRun();
const running = new Set<AgentProcess>();

async function checkLine(line: VersionLine): Promise<CheckResults> {
  const root = await versionProject(line);
  const langgraph = installedLanggraph(root);
  const agent = await spawnAgent(
    ["--config", join(root, "langgraph.json"), "--data-dir", freshBackend("pglite", "matrix").dataDir!],
    {
      SLIPWAY_SCHEMA_TIMEOUT_SECONDS: "120",
    },
    180_000,
  );
  running.add(agent);
  try {
    return await runVersionChecks(agent.url, { langgraph, hasCommand: hasCommand(langgraph), lacks: libraryGaps(langgraph) });
  } finally {
    await agent.kill();
    running.delete(agent);
  }
}

async function inPairs(lines: VersionLine[]): Promise<void> {
  const queue = [...lines];
  const worker = async () => {
    for (let line = queue.shift(); line; line = queue.shift()) {
      try {
        results.set(line.langgraph, await checkLine(line));
      } catch (error) {
        results.set(line.langgraph, error as Error);
      }
    }
  };
  await Promise.all([worker(), worker()]);
}

function table(): string {
  const rows = LINES.map((line) => {
    const found = results.get(line.langgraph);
    const cells = CHECKS.map((name) =>
      found instanceof Error ? "start failed" : found?.[name] === "ok" ? "yes" : found?.[name]?.startsWith("n/a") ? "n/a" : "no",
    );
    return `| ${line.langgraph} | ${line.core} | ${cells.join(" | ")} |`;
  });
  return [`| @langchain/langgraph | @langchain/core | ${CHECKS.join(" | ")} |`, `|${" --- |".repeat(CHECKS.length + 2)}`, ...rows].join("\n");
}

describe("every LangGraph.js line deploys as it is", () => {
  beforeAll(async () => {
    await inPairs(LINES);
    console.log(`version matrix:\n${table()}`);
  }, 900_000);
  afterAll(async () => {
    await Promise.all([...running].map((agent) => agent.kill()));
  });

  it.each(LINES.map((line) => [line.langgraph, line] as const))("@langchain/langgraph %s", (version) => {
    const found = results.get(version);
    if (found instanceof Error) throw found;
    const gaps = libraryGaps(version) as Record<string, string>;
    const expected = Object.fromEntries(CHECKS.map((name) => [name, gaps[name] ? `n/a: ${gaps[name]}` : "ok"]));
    expect(found).toEqual(expected);
  });
});
