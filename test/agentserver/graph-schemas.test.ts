import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemAssistantId } from "../../src/agentserver/assistants/index.ts";
import { spawnAgent, runSlipway, type AgentProcess } from "../support/agent-process.ts";
import { freshBackend } from "../support/backends.ts";

/**
 * Graph schemas (issue 14, point 3): the real `slipway agent` on
 * test/fixtures/graph-kinds, one graph per way of declaring state, read through the
 * official SDK. The build (`slipway agent --check`) extracts them from the TypeScript
 * types once and saves them; the server answers from that file.
 */
const ROOT = fileURLToPath(new URL("../fixtures/graph-kinds/", import.meta.url));
const CONFIG = join(ROOT, "langgraph.json");
const CACHE = join(ROOT, ".slipway", "graph-schemas.json");

type Schema = { type?: unknown; properties?: Record<string, Schema>; required?: string[]; [key: string]: unknown };
const props = (schema: unknown) => Object.keys((schema as Schema)?.properties ?? {});
const prop = (schema: unknown, name: string) => (schema as Schema).properties![name];

describe("graph schemas: slipway agent on the graph-kinds fixture", () => {
  let agent: AgentProcess;
  let client: Client;
  const dataDir = freshBackend("pglite", "schemas").dataDir!;

  beforeAll(async () => {
    rmSync(join(ROOT, ".slipway"), { recursive: true, force: true });
    // A generous bound: a loaded test machine must not turn a slow build into a failure.
    const check = await runSlipway(["agent", "--check", "--config", CONFIG], { env: { SLIPWAY_SCHEMA_TIMEOUT_SECONDS: "60" }, timeoutMs: 240_000 });
    expect(check.stderr).toBe("");
    expect(check.code).toBe(0);
    // The extraction timeout is 1 ms: a server that extracted again instead of reading
    // the build's file would answer run-time channel types only.
    agent = await spawnAgent(["--config", CONFIG, "--data-dir", dataDir], { SLIPWAY_SCHEMA_TIMEOUT_SECONDS: "0.001" });
    client = new Client({ apiUrl: agent.url });
  }, 300_000);
  afterAll(async () => {
    await agent?.kill();
  });

  it("the build saves the schemas of every graph beside the project", () => {
    expect(existsSync(CACHE)).toBe(true);
    const saved = JSON.parse(readFileSync(CACHE, "utf8")) as { graphs: Record<string, Record<string, unknown>>; problems: Record<string, string> };
    expect(saved.problems).toEqual({});
    expect(Object.keys(saved.graphs).sort()).toEqual(["annotation", "messages", "parent", "plain", "typed", "zod3", "zod4", "zod_registry"]);
    expect(Object.keys(saved.graphs.parent!).sort()).toEqual(["", "child", "child|grandchild"]);
  });

  it("Annotation.Root: typed state, input, output and context", async () => {
    const schemas = await client.assistants.getSchemas(systemAssistantId("annotation"));
    expect(schemas.graph_id).toBe("annotation");
    expect(prop(schemas.state_schema, "topic")).toEqual({ type: "string", description: "What to write about." });
    expect(prop(schemas.state_schema, "count")).toEqual({ type: "number" });
    expect(prop(schemas.state_schema, "notes")).toEqual({ type: "array", items: { type: "string" } });
    expect(prop(schemas.state_schema, "mood")).toEqual({ type: "string", enum: ["calm", "busy"] });
    // Union members in declaration order, though "openai" was met first in `host` (issue 25, item 9).
    expect(prop(schemas.state_schema, "provider")).toEqual({ type: "string", enum: ["anthropic", "openai", "mistral"] });
    expect(props(schemas.input_schema)).toEqual(["topic"]);
    expect(props(schemas.output_schema)).toEqual(["notes", "count"]);
    expect(prop(schemas.config_schema, "model")).toEqual({ type: "string" });
    expect(schemas.context_schema).toEqual(schemas.config_schema);
  });

  it("MessagesAnnotation: a messages channel Studio offers a chat for", async () => {
    const schemas = await client.assistants.getSchemas(systemAssistantId("messages"));
    const messages = prop(schemas.input_schema, "messages")!;
    expect(messages).toMatchObject({ type: "array", langgraph_type: "messages", items: { $ref: "#/definitions/BaseMessage" } });
    // As the vendor writes it: a oneOf over every message class, each its own definition (Studio's message inputs).
    const definitions = (schemas.input_schema as { definitions: Record<string, Schema> }).definitions;
    const classes = ["AIMessage", "BaseMessageChunk", "ChatMessage", "FunctionMessage", "HumanMessage", "RemoveMessage", "SystemMessage", "ToolMessage"];
    expect(definitions.BaseMessage).toEqual({
      description: expect.stringContaining("Base class for all types of messages"),
      oneOf: classes.map((name) => ({ $ref: `#/definitions/${name}` })),
    });
    expect(definitions.HumanMessage).toMatchObject({ type: "object", properties: { type: { const: "human" }, content: {} }, required: ["content"] });
    expect(definitions.ToolMessage).toMatchObject({
      properties: { type: { const: "tool" }, tool_call_id: { type: "string" } },
      required: ["content", "tool_call_id"],
    });
  });

  it("zod v3, zod v4 with a context, and the zod registry's metadata", async () => {
    const zod3 = await client.assistants.getSchemas(systemAssistantId("zod3"));
    expect(prop(zod3.input_schema, "query")).toMatchObject({ type: "string", description: "the question" });
    expect(prop(zod3.input_schema, "limit")).toMatchObject({ type: "number" });
    const zod4 = await client.assistants.getSchemas(systemAssistantId("zod4"));
    expect(prop(zod4.state_schema, "tags")).toMatchObject({ type: "array", items: { type: "string" } });
    expect(prop(zod4.config_schema, "user")).toMatchObject({ type: "string" });
    const registry = await client.assistants.getSchemas(systemAssistantId("zod_registry"));
    expect(prop(registry.state_schema, "messages")).toMatchObject({ langgraph_type: "messages" });
    expect(prop(registry.state_schema, "total")).toMatchObject({ type: "number" });
  });

  it("TypeScript-typed state: unions, optional nested objects, records", async () => {
    const schemas = await client.assistants.getSchemas(systemAssistantId("typed"));
    const state = schemas.state_schema as Schema;
    expect(prop(state, "title")).toEqual({ type: "string", description: "The ticket's title." });
    expect(prop(state, "priority")).toEqual({ type: "number", enum: [1, 2, 3] });
    expect(prop(state, "assignee")).toEqual({
      type: "object",
      // Union members in declaration order (`string | null`), as the vendor lists them.
      properties: { name: { type: "string" }, email: { type: ["string", "null"] } },
      required: ["name", "email"],
    });
    expect(prop(state, "meta")).toEqual({ type: "object", additionalProperties: { type: "number" } });
  });

  it("subgraphs are keyed by namespace and carry the vendor's state/input/output/config", async () => {
    const all = await client.assistants.getSubgraphs(systemAssistantId("parent"), { recurse: true });
    expect(Object.keys(all).sort()).toEqual(["child", "child|grandchild"]);
    const child = all.child as unknown as Record<string, Schema>;
    expect(props(child.state)).toEqual(["question", "answer", "step"]);
    expect(props(child.input)).toEqual(["question", "answer", "step"]);
    expect(child.config).toMatchObject({ type: "object" });
    // The documented GraphSchema names carry the same schemas.
    expect(child.state_schema).toEqual(child.state);
    expect(props(all["child|grandchild"]!.input_schema)).toEqual(["question", "answer"]);
    const top = await client.assistants.getSubgraphs(systemAssistantId("parent"));
    expect(Object.keys(top)).toEqual(["child"]);
    const under = await client.assistants.getSubgraphs(systemAssistantId("parent"), { namespace: "child", recurse: true });
    expect(Object.keys(under)).toEqual(["child"]);
  });

  it("a JavaScript graph built by statements, and its subgraph", async () => {
    const schemas = await client.assistants.getSchemas(systemAssistantId("plain"));
    expect(props(schemas.state_schema)).toEqual(["question", "answer", "asked"]);
    const subgraphs = await client.assistants.getSubgraphs(systemAssistantId("plain"));
    expect(props((subgraphs.ask_twice as unknown as Record<string, Schema>).state)).toEqual(["question", "answer"]);
  });

  it("the graph endpoint draws subgraphs with xray", async () => {
    const nodes = async (xray?: boolean) =>
      ((await client.assistants.getGraph(systemAssistantId("parent"), { xray })).nodes as Array<{ id: string | number }>).map((node) => String(node.id));
    expect(await nodes()).toContain("child");
    expect(await nodes(true)).toContain("child:prepare");
  });
});
