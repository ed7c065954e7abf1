import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../../../test/support/backends.ts";
import { call, startAssistantServer, type AssistantTestServer } from "./testing.ts";

type Drawing = { nodes: Array<{ id: string }>; edges: Array<{ source: string; target: string }> };
const nodeIds = (graph: unknown) => (graph as Drawing).nodes.map((n) => n.id).sort();

describe.each(BACKENDS)("assistant graphs, subgraphs and schemas on %s", (backend) => {
  let server: AssistantTestServer;
  beforeAll(async () => {
    server = await startAssistantServer(backend);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("draws the graph, expanding subgraphs with xray (bool or depth)", async () => {
    const agent = (await server.client.assistants.getGraph("agent")) as unknown as Drawing;
    expect(nodeIds(agent)).toEqual(["__end__", "__start__", "agent"]);
    expect(agent.edges).toEqual(expect.arrayContaining([expect.objectContaining({ source: "__start__", target: "agent" })]));

    const flat = await server.client.assistants.getGraph("typed");
    expect(nodeIds(flat)).toEqual(["__end__", "__start__", "plan", "sub"]);
    const full = await server.client.assistants.getGraph("typed", { xray: true });
    expect(nodeIds(full)).toEqual(["__end__", "__start__", "plan", "sub:deep:d1", "sub:deep:d2", "sub:m1"]);
    const oneLevel = await server.client.assistants.getGraph("typed", { xray: 1 });
    expect(nodeIds(oneLevel)).toEqual(["__end__", "__start__", "plan", "sub:deep", "sub:m1"]);
    expect(nodeIds(await server.client.assistants.getGraph("typed", { xray: 0 }))).toEqual(nodeIds(flat));
    expect(nodeIds((await call(server.url, "GET", "/assistants/typed/graph?xray=false")).body)).toEqual(nodeIds(flat));
  });

  it("draws factory and uncompiled builder graphs", async () => {
    const assistant = await server.client.assistants.create({ graphId: "factory", config: { configurable: { reply: "custom" } } });
    expect(nodeIds(await server.client.assistants.getGraph(assistant.assistant_id))).toEqual(["__end__", "__start__", "reply"]);
    expect(nodeIds(await server.client.assistants.getGraph("builder"))).toEqual(["__end__", "__start__", "noop"]);
  });

  it("derives JSON Schemas from a zod-defined graph", async () => {
    const schemas = await server.client.assistants.getSchemas("typed");
    expect(schemas.graph_id).toBe("typed");
    const state = schemas.state_schema as { type: string; properties: Record<string, { type?: string; description?: string }>; required?: string[] };
    expect(state.type).toBe("object");
    expect(state.properties.topic).toMatchObject({ type: "string", description: "what to write about" });
    expect(state.properties.count).toMatchObject({ type: "number", default: 0 });
    expect(state.properties.items).toMatchObject({ type: "array", items: { type: "string" } });
    // The state is written as an update, as the vendor's server writes it: nothing required.
    expect(state.required ?? []).toEqual([]);
    // Input is a partial update: nothing is required.
    expect((schemas.input_schema as { required?: string[] }).required ?? []).toEqual([]);
    expect(Object.keys((schemas.output_schema as { properties: object }).properties).sort()).toEqual(["count", "items", "topic"]);
    expect(schemas.config_schema).toMatchObject({
      type: "object",
      properties: { model: { type: "string", description: "which model to call" } },
      required: ["model"],
    });
    expect(schemas.context_schema).toEqual(schemas.config_schema);
  });

  it("without the compiler's reading, types come from the run-time channels: messages, defaults, any", async () => {
    const agent = await server.client.assistants.getSchemas("agent");
    expect(agent.state_schema).toMatchObject({
      type: "object",
      properties: { messages: { type: "array", items: { $ref: "#/definitions/BaseMessage" }, langgraph_type: "messages" } },
      definitions: { BaseMessage: { oneOf: expect.arrayContaining([{ $ref: "#/definitions/HumanMessage" }]) }, HumanMessage: { type: "object" } },
    });
    expect(agent.input_schema).toMatchObject({ type: "object", properties: { messages: {} } });
    expect(agent.config_schema).toBeUndefined();
    const slow = await server.client.assistants.getSchemas("slow");
    expect(Object.keys((slow.state_schema as { properties: object }).properties).sort()).toEqual(["delay_ms", "messages", "steps"]);
    expect((slow.state_schema as { properties: Record<string, object> }).properties.steps).toEqual({});
  });

  it("lists subgraphs by namespace, recursing when asked", async () => {
    expect(Object.keys(await server.client.assistants.getSubgraphs("typed"))).toEqual(["sub"]);
    const all = await server.client.assistants.getSubgraphs("typed", { recurse: true });
    expect(Object.keys(all).sort()).toEqual(["sub", "sub|deep"]);
    expect(all["sub|deep"]!.state_schema).toMatchObject({ properties: { topic: { type: "string" } } });
    expect(Object.keys(await server.client.assistants.getSubgraphs("typed", { namespace: "sub|deep", recurse: true }))).toEqual(["sub|deep"]);
    expect(Object.keys(await server.client.assistants.getSubgraphs("typed", { namespace: "sub" }))).toEqual(["sub"]);
    expect(await server.client.assistants.getSubgraphs("typed", { namespace: "elsewhere" })).toEqual({});

    const nested = await server.client.assistants.getSubgraphs("nested");
    expect(Object.keys(nested)).toEqual(["child"]);
    expect(nested.child!.state_schema).toMatchObject({ properties: { messages: { langgraph_type: "messages" } } });
    expect(await server.client.assistants.getSubgraphs("agent")).toEqual({});
  });

  it("answers 404 for an assistant whose graph is gone", async () => {
    // A later revision dropped the graph from langgraph.json; the assistant row remains.
    const id = "3f1d2c4b-5a6e-4f70-8b9c-0d1e2f3a4b5c";
    await server.db.query("INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'retired', 'old')", [id]);
    expect((await server.client.assistants.get(id)).graph_id).toBe("retired");
    for (const suffix of ["/graph", "/schemas", "/subgraphs"]) {
      const res = await call(server.url, "GET", `/assistants/${id}${suffix}`);
      expect(res).toMatchObject({ status: 404, body: { detail: 'Graph "retired" not found' } });
    }
  });
});
