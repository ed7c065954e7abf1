import { fileURLToPath } from "node:url";
import { describe, expect, inject, it } from "vitest";
import { checkProject } from "../../src/agentserver/check.ts";

const BROKEN = fileURLToPath(new URL("../fixtures/python-broken/langgraph.json", import.meta.url));
const ROOT = fileURLToPath(new URL("../fixtures/python-broken/", import.meta.url));
const WORKING = fileURLToPath(new URL("../fixtures/python-agent/langgraph.json", import.meta.url));

describe("loading Python graphs (slipway agent --check)", () => {
  it("lists the graphs of a project whose Python graphs import", async () => {
    process.env.SLIPWAY_PYTHON = inject("pythonPath");
    expect(await checkProject(WORKING)).toEqual(expect.arrayContaining(["echo", "approve", "nested", "memory"]));
  });

  it("fails with the import's traceback, in the project's own paths", async () => {
    process.env.SLIPWAY_PYTHON = inject("pythonPath");
    const failure = await checkProject(BROKEN).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure?.message).toContain("ZeroDivisionError: division by zero");
    expect(failure?.message).toContain('File "helpers.py", line 1');
    expect(failure?.message).toContain('File "broken.py", line 3');
    expect(failure?.message).not.toContain(ROOT);
  });
});
