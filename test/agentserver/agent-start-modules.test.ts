import { fileURLToPath } from "node:url";
import { build, stop, type Metafile } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * What `slipway agent` loads at every start: the CLI's entry and the modules its action
 * imports, with everything they import statically (a dynamic `import()` is loaded only
 * when reached). Packages a process may never use must stay behind a dynamic import
 * (decision 0053): each costs start-up CPU and heap in every agent process.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const STARTS_WITH = [
  "src/cli/index.ts",
  "src/agentserver/server.ts",
  "src/agentserver/api-key.ts",
  "src/agentserver/graphs/load-error.ts",
  "src/agentserver/graphs/typescript-sources.ts",
  "src/ratelimit/cli-options.ts",
  "src/ratelimit/setup.ts",
  "src/http/port-check.ts",
];

let packages: Set<string>;
let files: Set<string>;
beforeAll(async () => {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: STARTS_WITH,
    bundle: true,
    write: false,
    outdir: "out",
    format: "esm",
    platform: "node",
    packages: "external",
    splitting: true,
    metafile: true,
    logLevel: "silent",
  });
  ({ packages, files } = staticClosure(result.metafile, STARTS_WITH));
});
// esbuild's service process would keep the test worker alive.
afterAll(() => stop());

/** The files and packages reached from `entries` through static imports only. */
function staticClosure(metafile: Metafile, entries: string[]): { packages: Set<string>; files: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const pending = [...entries];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (files.has(file)) continue;
    files.add(file);
    for (const imported of metafile.inputs[file]?.imports ?? []) {
      if (imported.kind === "dynamic-import") continue;
      if (imported.external) packages.add(imported.path);
      else pending.push(imported.path);
    }
  }
  return { packages, files };
}

describe("modules loaded at every start of `slipway agent`", () => {
  it("sees the agent server (the closure is not empty)", () => {
    expect(files).toContain("src/agentserver/runs/service.ts");
    expect(packages).toContain("fastify");
  });

  it("no database client of a back end that is not chosen: pg, PGlite and the socket client load when opened", () => {
    expect([...packages].filter((name) => name === "pg" || name.startsWith("@electric-sql/pglite"))).toEqual([]);
    expect([...files].filter((file) => /storage\/(postgres|pglite|shared-pglite-client)\.ts$/.test(file))).toEqual([]);
  });

  it("no Redis client nor YAML parser unless a Redis URL or a policy file is given", () => {
    expect([...packages].filter((name) => name === "ioredis" || name === "yaml")).toEqual([]);
  });

  it("no tsx (nor esbuild) before the project is known to need it", () => {
    expect([...packages].filter((name) => name.startsWith("tsx") || name === "esbuild")).toEqual([]);
  });

  it("not Slipway's own @langchain/langgraph: a project brings its own, and ours is needed only for a command or a schema", () => {
    expect([...packages].filter((name) => name === "@langchain/langgraph" || name.startsWith("@langchain/langgraph/"))).toEqual([]);
  });

  it("not Slipway's @langchain/langgraph-checkpoint, @langchain/core, langsmith nor zod: the saver and the store load them at first use", () => {
    const heavy = (name: string) =>
      ["@langchain/langgraph-checkpoint", "@langchain/core", "langsmith", "zod"].some((p) => name === p || name.startsWith(`${p}/`));
    expect([...packages].filter(heavy)).toEqual([]);
  });
});
