import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { runSlipway, spawnAgent, type AgentProcess } from "../support/agent-process.ts";

/**
 * `env` of langgraph.json, as the vendor's tools read it: a .env file or an object of
 * values; a file that is missing (git-ignored, so never pushed) is a warning, not a
 * failure; the deployment's own environment (its secrets) wins over both.
 * The graph answers with SLIPWAY_FIXTURE_MODEL_KEY, and fails to import without it.
 */
const GRAPH = fileURLToPath(new URL("../fixtures/cjs-project/src/broken/throws-at-import.ts", import.meta.url));
const KEY = "SLIPWAY_FIXTURE_MODEL_KEY";

const dirs: string[] = [];
const agents: AgentProcess[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.kill()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function project(env: unknown, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "slipway-env-"));
  dirs.push(dir);
  writeFileSync(join(dir, "langgraph.json"), JSON.stringify({ graphs: { agent: `${GRAPH}:graph` }, env }));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return join(dir, "langgraph.json");
}

/** Starts the project with `env` as its process environment and answers what its graph sees. */
async function keySeen(config: string, env: Record<string, string> = {}): Promise<{ answer: unknown; output: string }> {
  const agent = await spawnAgent(["--config", config, "--data-dir", join(mkdtempSync(join(tmpdir(), "slipway-env-data-")), "db")], env);
  agents.push(agent);
  const client = new Client({ apiUrl: agent.url });
  const values = (await client.runs.wait(null, "agent", { input: { messages: [{ role: "user", content: "hi" }] } })) as {
    messages: Array<{ content: unknown }>;
  };
  return { answer: values.messages.at(-1)?.content, output: agent.output() };
}

/**
 * What the graphs of `config` see as SLIPWAY_FIXTURE_MODEL_KEY, by --check (no server to
 * start): the probe graph's import fails, reporting it.
 */
async function probe(config: string, secret?: string): Promise<string> {
  writeFileSync(join(config, "..", "probe.ts"), `throw new Error("seen: " + process.env.${KEY});\n`);
  writeFileSync(config, JSON.stringify({ ...JSON.parse(readFileSync(config, "utf8")), graphs: { probe: "./probe.ts:graph" } }));
  const check = await runSlipway(["agent", "--check", "--config", config], { env: { [KEY]: secret } });
  return /seen: ([\w-]+)/.exec(check.stdout)?.[1] ?? check.stdout;
}

describe("langgraph.json env", () => {
  it("a missing env file: the check passes and says so on stderr; a start serves and says so too", { timeout: 180_000 }, async () => {
    const config = project(".env");
    const check = await runSlipway(["agent", "--check", "--config", config], { env: { [KEY]: "from-secret" } });
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout.trim())).toEqual({ event: "check", ok: true, graphs: ["agent"] });
    // Its graph lies outside the project's folder: a line also says it loads through tsx (decision 0056).
    const warnings = check.stderr
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { level: string; msg: string });
    expect(warnings.map((line) => line.level)).toEqual(warnings.map(() => "warn"));
    const warning = warnings.find((line) => line.msg.includes("env file")) ?? { msg: check.stderr };
    expect(warning.msg).toContain(
      `env file ".env" not found (${join(config, "..", ".env")}): continuing without it; set its values as the deployment's secrets`,
    );

    const started = await keySeen(config, { [KEY]: "from-secret" });
    expect(started.answer).toBe("from-secret");
    expect(started.output).toMatch(/"level":40,.*env file \\".env\\" not found/);
  });

  it("an env file's values, or an object's, reach the graphs; the process environment wins over both", async () => {
    const fromFile = project(".env", { ".env": `${KEY}=from-file\n` });
    expect(await probe(fromFile)).toBe("from-file");
    expect(await probe(fromFile, "from-secret")).toBe("from-secret");
    const fromObject = project({ [KEY]: "from-object" });
    expect(await probe(fromObject)).toBe("from-object");
    expect(await probe(fromObject, "from-secret")).toBe("from-secret");
  });
});
