import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, describe, expect, it } from "vitest";
import { spawnAgent } from "../support/agent-process.ts";
import { freshBackend } from "../support/backends.ts";

/**
 * Decision 0056: a TypeScript project is compiled once and its agent process loads plain
 * JavaScript, with no tsx loader; tsx stays the fallback. The graphs report what they see:
 * a module-level counter shared by both, a file read beside the graph through
 * import.meta.url, a tsconfig `paths` alias, a .tsx file, and whether tsx's hooks are in
 * the process (`require.extensions[".ts"]` is tsx's CommonJS hook, registered with its ES one).
 */
const BIN = fileURLToPath(new URL("../../bin/slipway.js", import.meta.url));
const REPO_MODULES = fileURLToPath(new URL("../../node_modules", import.meta.url));
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const REPORT = `
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
export function report(count: number, extra: string) {
  const require = createRequire(import.meta.url);
  return JSON.stringify({
    count,
    extra,
    prompt: readFileSync(new URL("./prompt.txt", import.meta.url), "utf8").trim(),
    tsHook: typeof require.extensions[".ts"],
    marker: Boolean((globalThis as Record<symbol, unknown>)[Symbol.for("slipway.typescript-loader")]),
  });
}
`;

const graphModule = (imports: string, extra: string) => `
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
${imports}
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", async () => ({ messages: [new AIMessage(report(bump(), ${extra}))] }))
  .addEdge(START, "agent")
  .addEdge("agent", END)
  .compile();
`;

function project(type: "module" | "commonjs" = "module"): string {
  const dir = mkdtempSync(join(tmpdir(), "slipway-ts-project-"));
  made.push(dir);
  symlinkSync(REPO_MODULES, join(dir, "node_modules"));
  const files: Record<string, string> = {
    "package.json": JSON.stringify({ name: "ts-project", private: true, type }),
    "tsconfig.json": JSON.stringify({ compilerOptions: { baseUrl: ".", paths: { "@lib/*": ["src/lib/*"] }, jsx: "react", jsxFactory: "h" } }),
    "langgraph.json": JSON.stringify({ graphs: { one: "./src/one.ts:graph", two: "./src/two.ts:graph" } }),
    "src/prompt.txt": "the prompt beside the graphs\n",
    "src/report.ts": REPORT,
    "src/lib/counter.ts": "let count = 0;\nexport const bump = (): number => ++count;\n",
    "src/view.tsx":
      'const h = (tag: string, _props: unknown, ...children: string[]) => "<" + tag + ">" + children.join("") + "</" + tag + ">";\nexport const render = (name: string) => <b>{name}</b>;\n',
    "src/one.ts": graphModule('import { bump } from "./lib/counter.ts";\nimport { report } from "./report.ts";', '"one"'),
    "src/two.ts": graphModule('import { bump } from "@lib/counter";\nimport { report } from "./report";\nimport { render } from "./view";', 'render("two")'),
  };
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

async function serve(dir: string, env: Record<string, string> = {}) {
  const { databaseUrl, schema } = freshBackend("postgres", "tscompiled");
  const agent = await spawnAgent(["--config", join(dir, "langgraph.json"), "--database-url", databaseUrl!, "--database-schema", schema], env);
  const client = new Client({ apiUrl: agent.url });
  const ask = async (graphId: string) => {
    const values = (await client.runs.wait(null, graphId, { input: { messages: [{ role: "human", content: "hi" }] } })) as {
      messages: Array<{ content: string }>;
    };
    return JSON.parse(values.messages.at(-1)!.content) as { count: number; extra: string; prompt: string; tsHook: string; marker: boolean };
  };
  return { agent, ask };
}

describe("a TypeScript project's agent process", () => {
  it("loads the project compiled: one instance of a shared module, files beside the graph, paths, .tsx, and no tsx loader", async () => {
    const dir = project();
    const { agent, ask } = await serve(dir);
    try {
      const one = await ask("one");
      expect(one).toEqual({ count: 1, extra: "one", prompt: "the prompt beside the graphs", tsHook: "undefined", marker: false });
      const two = await ask("two");
      expect(two).toEqual({ count: 2, extra: "<b>two</b>", prompt: "the prompt beside the graphs", tsHook: "undefined", marker: false });
      expect((await ask("one")).count).toBe(3);
      expect(existsSync(join(dir, ".slipway-compiled", "manifest.json"))).toBe(true);
      expect(agent.output()).not.toContain("TypeScript not compiled");
    } finally {
      await agent.kill();
    }
  }, 120_000);

  it("uses tsx's loader when SLIPWAY_TYPESCRIPT=loader asks, and when the project cannot be compiled (said on stderr)", async () => {
    // tsx reads the tsconfig of the process's working folder unless told (its `paths` included).
    const tsconfigOf = (dir: string) => ({ TSX_TSCONFIG_PATH: join(dir, "tsconfig.json") });
    const typescript = project();
    const forced = await serve(typescript, { SLIPWAY_TYPESCRIPT: "loader", ...tsconfigOf(typescript) });
    try {
      expect(await forced.ask("one")).toMatchObject({ count: 1, tsHook: "function", marker: true });
      expect((await forced.ask("two")).count).toBe(2);
    } finally {
      await forced.agent.kill();
    }
    // A CommonJS project: tsx compiles it to CommonJS, requiring the packages' CommonJS builds.
    const cjs = project("commonjs");
    const commonjs = await serve(cjs, tsconfigOf(cjs));
    try {
      expect(await commonjs.ask("two")).toMatchObject({ count: 1, extra: "<b>two</b>", tsHook: "function", marker: true });
      expect(commonjs.agent.output()).toMatch(/TypeScript not compiled \(src\/one\.ts is a CommonJS module\): loading it through tsx/);
    } finally {
      await commonjs.agent.kill();
    }
  }, 120_000);

  it("--check: a compiled form that fails where tsx passes is recorded, and starts use tsx", async () => {
    const dir = project();
    // An import of a computed relative path resolves from the compiled output, not the source.
    writeFileSync(join(dir, "src/extra.ts"), "export const extra = 1;\n");
    const one = readFileSync(join(dir, "src/one.ts"), "utf8");
    const two = readFileSync(join(dir, "src/two.ts"), "utf8");
    writeFileSync(join(dir, "src/two.ts"), two.replace('"@lib/counter"', '"./lib/counter.ts"'));
    writeFileSync(join(dir, "src/one.ts"), `const name = "./extra.ts";\nawait import(name);\n${one}`);
    const check = spawnSync(process.execPath, [BIN, "agent", "--check", "--config", join(dir, "langgraph.json")], {
      encoding: "utf8",
      env: { ...process.env, SLIPWAY_CHECK_SCHEMAS: "0" },
    });
    expect(check.status, check.stderr + check.stdout).toBe(0);
    expect(check.stderr).toMatch(/TypeScript not compiled \(its compiled form failed the check: .*extra\.ts/);
    const manifest = JSON.parse(readFileSync(join(dir, ".slipway-compiled", "manifest.json"), "utf8")) as { fallback?: string };
    expect(manifest.fallback).toMatch(/compiled form failed the check/);
    const served = await serve(dir, { TSX_TSCONFIG_PATH: join(dir, "tsconfig.json") });
    try {
      expect(await served.ask("one")).toMatchObject({ count: 1, tsHook: "function", marker: true });
    } finally {
      await served.agent.kill();
    }
  }, 120_000);
});
