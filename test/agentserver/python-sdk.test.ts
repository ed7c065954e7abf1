import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";

const MIXED_PROJECT = fileURLToPath(new URL("../fixtures/mixed-agent/langgraph.json", import.meta.url));
const FLOWS = fileURLToPath(new URL("../support/python-sdk-flows.py", import.meta.url));
const API_KEY = "python-sdk-test-key-0123456789";

const you = (text: string) => [
  ["human", text],
  ["ai", `You said: ${text}`],
];

/**
 * The official Python SDK (langgraph_sdk) and RemoteGraph, run by a Python process against
 * `slipway agent` serving a project that mixes a JS graph and Python graphs: both languages
 * answer alike, through every call a Python user makes first.
 */
describe.each(BACKENDS)("the Python SDK and RemoteGraph on a mixed JS and Python project (%s)", (backend) => {
  let agent: TestAgentServer;
  // Both clients, both graphs: one Python process, its findings asserted below.
  let seen: { sdk: Record<string, any>; remote: Record<string, any> };

  beforeAll(async () => {
    process.env.SLIPWAY_PYTHON = inject("pythonPath");
    agent = await startTestAgentServer(backend, { configPath: MIXED_PROJECT, apiKey: API_KEY });
    const { stdout } = await promisify(execFile)(inject("pythonPath"), [FLOWS, agent.url, API_KEY, "js_echo", "py_echo"], { timeout: 180_000 });
    seen = JSON.parse(stdout);
  }, 240_000);
  afterAll(async () => agent?.close());

  it("lists the graphs of both languages as assistants", () => {
    expect(seen.sdk.graph_ids).toEqual(["js_echo", "py_approve", "py_echo"]);
  });

  it.each(["js_echo", "py_echo"])("%s: waits, streams, joins, replays a stream, keeps state and history, and runs stateless through the SDK", (graph) => {
    expect(seen.sdk[graph]).toEqual({
      waited: you("hi"),
      events: ["metadata", "updates", "values"],
      run: { status: "success", metadata_from: "python" },
      state: [...you("hi"), ...you("again"), ...you("queued")],
      next: [],
      history_newest_is_state: true,
      history_length: expect.any(Number),
      stateless: you("stateless"),
      replayed: ["metadata", "values"],
    });
    // An input checkpoint and a step per run, at least.
    expect(seen.sdk[graph].history_length).toBeGreaterThanOrEqual(6);
  });

  it("stops a Python graph at its interrupt and resumes it with a Command", () => {
    expect(seen.sdk.approve).toEqual({ next: ["ask"], interrupts: [{ question: "approve deploy?" }], resumed: { request: "deploy", approved: true } });
  });

  it("answers 404 for a thread that does not exist, which the SDK raises", () => {
    expect(seen.sdk.missing_thread).toBe(404);
  });

  it.each(["js_echo", "py_echo"])("%s: RemoteGraph invokes, streams updates and reads state and history", (graph) => {
    expect(seen.remote[graph]).toEqual({
      stateless: you("alone"),
      invoked: you("remote"),
      updates: [["answer"]],
      state: [...you("remote"), ...you("streamed")],
      history_length: expect.any(Number),
    });
    expect(seen.remote[graph].history_length).toBeGreaterThanOrEqual(4);
  });
});
