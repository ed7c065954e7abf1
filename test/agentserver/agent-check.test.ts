import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runSlipway } from "../support/agent-process.ts";

/**
 * `slipway agent --check`, which the revision pipeline runs at build time: it must
 * refuse exactly what a start refuses, with the real reason, and accept the rest.
 */
const fixture = (path: string) => fileURLToPath(new URL(`../fixtures/${path}`, import.meta.url));
const GRAPH = fixture("agents/src/graphs.ts");
const RUNNING = process.versions.node;
const MAJOR = Number(RUNNING.split(".")[0]);

/** A langgraph.json in a fresh directory, its graph given by absolute path. */
function configWith(extra: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), "slipway-check-"));
  const file = join(dir, "langgraph.json");
  writeFileSync(file, JSON.stringify({ graphs: { agent: `${GRAPH}:agent` }, ...extra }));
  return file;
}

const verdict = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;

describe("slipway agent --check", () => {
  it("loads every graph and prints one JSON line, without a database or a port", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "slipway-check-")), "never");
    const run = await runSlipway(["agent", "--check", "--config", fixture("graph-loading/langgraph.json"), "--data-dir", dataDir]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('{"event":"check","ok":true,"graphs":["promised","logging","dynamic"]}\n');
    expect(existsSync(dataDir)).toBe(false);
  });

  it("a graph that throws while imported: exit 1, the cause and its stack on stderr, the verdict on stdout", async () => {
    const run = await runSlipway(["agent", "--check", "--config", fixture("cjs-project/langgraph.throws.json")], {
      env: { SLIPWAY_FIXTURE_MODEL_KEY: undefined },
    });
    expect(run.code).toBe(1);
    const file = fixture("cjs-project/src/broken/throws-at-import.ts");
    expect(run.stderr).toContain(`slipway agent --check: graph "needs_key": importing ${file} failed: SLIPWAY_FIXTURE_MODEL_KEY is not set`);
    expect(run.stderr).toContain(`at requireKey (${file}:6:`);
    expect(verdict(run.stdout)).toEqual({
      event: "check",
      ok: false,
      error: `graph "needs_key": importing ${file} failed: SLIPWAY_FIXTURE_MODEL_KEY is not set: the model client cannot be created`,
      graph: "needs_key",
      file,
    });
  });

  it("refuses what a start refuses: an unsupported key, a malformed LANGGRAPH_CONFIG", async () => {
    const meta = await runSlipway(["agent", "--check", "--config", configWith({ http: { disable_meta: true } })]);
    expect(meta.code).toBe(1);
    expect(meta.stderr).toMatch(/http\.disable_meta: not supported by this server yet/);
    expect(verdict(meta.stdout)).toMatchObject({ event: "check", ok: false });
    // http.app is imported as a start imports it: a missing module stops the check.
    const app = await runSlipway(["agent", "--check", "--config", configWith({ http: { app: "./no-such-app.ts:app" } })]);
    expect(app.code).toBe(1);
    expect(app.stderr).toMatch(/http\.app: importing .*no-such-app\.ts failed/);
    expect(verdict(app.stdout)).toMatchObject({ event: "check", ok: false });
    // auth.path is loaded as a start loads it: a missing module stops the check.
    const auth = await runSlipway(["agent", "--check", "--config", configWith({ auth: { path: "./no-such-auth.ts:auth" } })]);
    expect(auth.code).toBe(1);
    expect(auth.stderr).toMatch(/auth\.path: importing .*no-such-auth\.ts failed/);
    expect(verdict(auth.stdout)).toMatchObject({ event: "check", ok: false });
    const env = await runSlipway(["agent", "--check", "--config", configWith({})], { env: { LANGGRAPH_CONFIG: '{"agent": [1]}' } });
    expect(env.code).toBe(1);
    expect(verdict(env.stdout)).toEqual({ event: "check", ok: false, error: 'LANGGRAPH_CONFIG.agent: must be an object such as {"configurable": {...}}' });
  });

  it("node_version: the running major passes; another major, an unsupported one or a range stops with a clear message", async () => {
    const check = (nodeVersion: unknown) => runSlipway(["agent", "--check", "--config", configWith({ node_version: nodeVersion })]);
    const same = await check(String(MAJOR));
    expect(same.code).toBe(0);
    expect(verdict(same.stdout)).toEqual({ event: "check", ok: true, graphs: ["agent"] });
    expect((await check(MAJOR)).code).toBe(0);

    const other = await check(String(MAJOR + 2));
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(`node_version: the project asks for Node ${MAJOR + 2} but this server runs Node ${RUNNING}`);
    expect(other.stderr).toContain(`set "node_version": "${MAJOR}"`);

    const old = await check("18");
    expect(old.code).toBe(1);
    expect(old.stderr).toContain("node_version: Node 18 is not supported: the minimum is 20");

    const range = await check(">=20");
    expect(range.code).toBe(1);
    expect(range.stderr).toContain('node_version: must be a major version such as "20"');
    // Five `slipway agent --check` processes one after another: about 12 s each under CI's load.
  }, 180_000);
});

describe("slipway agent (a start) checks node_version", () => {
  it("refuses to start on another major than the project asks for, before it opens storage", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "slipway-check-")), "data");
    const run = await runSlipway(["agent", "--config", configWith({ node_version: String(MAJOR + 2) }), "--port", "0", "--data-dir", dataDir], {
      timeoutMs: 30_000,
    });
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`node_version: the project asks for Node ${MAJOR + 2} but this server runs Node ${RUNNING}`);
    expect(existsSync(dataDir)).toBe(false);
  });
});
