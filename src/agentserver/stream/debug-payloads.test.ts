import { describe, expect, it } from "vitest";
import { reshapePayload } from "./debug-payloads.ts";

const config = (id: string) => ({ configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id } });
const wire = (id: string) => ({ thread_id: "t", checkpoint_ns: "", checkpoint_id: id, checkpoint_map: null });

describe("checkpoint stream payloads", () => {
  it("name the parent alike whether LangGraph.js (parentConfig) or Python's LangGraph (parent_config, from the worker) made them", () => {
    const js = reshapePayload("checkpoints", { config: config("2"), parentConfig: config("1"), values: {}, next: [], tasks: [] });
    const py = reshapePayload("checkpoints", { config: config("2"), parent_config: config("1"), values: {}, next: [], tasks: [] });
    expect(py).toEqual(js);
    expect(py).toMatchObject({ parent_config: config("1"), checkpoint: wire("2"), parent_checkpoint: wire("1") });
  });

  it("leave out a first checkpoint's parent, which Python's LangGraph sends as null", () => {
    const js = reshapePayload("debug", { type: "checkpoint", payload: { config: config("1"), values: {}, next: [], tasks: [] } });
    const py = reshapePayload("debug", { type: "checkpoint", payload: { config: config("1"), parent_config: null, values: {}, next: [], tasks: [] } });
    expect(py).toEqual(js);
    expect((py as { payload: Record<string, unknown> }).payload).toMatchObject({ parent_checkpoint: null });
  });
});
