import type { FastifyRequest } from "fastify";
import { ownSseEvents, type OwnApi } from "../own-api.ts";
import { invalidParams } from "../jsonrpc/envelope.ts";

/** An assistant as the tool list needs it. */
interface ListedAssistant {
  assistant_id: string;
  graph_id: string;
  name?: string | null;
  description?: string | null;
}

export interface McpTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ToolResult {
  content: Array<{ type: "text"; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError: boolean;
}

const PAGE = 1000;

/**
 * Every assistant the caller may see, oldest first, each with its tool name: the
 * assistant's name, as on the vendor's server; an assistant whose name an older one
 * already took is named by its id (names must be unique in a tool list).
 */
async function namedAssistants(api: OwnApi, caller: FastifyRequest): Promise<Array<{ name: string; assistant: ListedAssistant }>> {
  const all: ListedAssistant[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const { value } = await api.json<ListedAssistant[]>(caller, "POST", "/assistants/search", {
      limit: PAGE,
      offset,
      sort_by: "created_at",
      sort_order: "asc",
      select: ["assistant_id", "graph_id", "name", "description"],
    });
    all.push(...value);
    if (value.length < PAGE) break;
  }
  const taken = new Set<string>();
  return all.map((assistant) => {
    const preferred = assistant.name || assistant.graph_id;
    const name = taken.has(preferred) ? assistant.assistant_id : preferred;
    taken.add(name);
    return { name, assistant };
  });
}

/** tools/list: one tool per assistant, its input schema the graph's. */
export async function listTools(api: OwnApi, caller: FastifyRequest): Promise<McpTool[]> {
  const schemas = new Map<string, Promise<Record<string, unknown>>>();
  const inputSchemaOf = (assistant: ListedAssistant) => {
    // Assistants of one graph share its schemas (unless their config changes them: rare).
    let schema = schemas.get(assistant.graph_id);
    if (!schema) {
      schema = api
        .json<{ input_schema?: unknown }>(caller, "GET", `/assistants/${assistant.assistant_id}/schemas`)
        .then(({ value }) => asObjectSchema(value.input_schema));
      schemas.set(assistant.graph_id, schema);
    }
    return schema;
  };
  return Promise.all(
    (await namedAssistants(api, caller)).map(async ({ name, assistant }) => ({
      name,
      description: assistant.description || `Runs the LangGraph graph "${assistant.graph_id}" (assistant ${assistant.assistant_id}) and returns its output.`,
      inputSchema: await inputSchemaOf(assistant),
    })),
  );
}

/** MCP wants an object schema; a graph without one (or with another type) takes any object. */
function asObjectSchema(schema: unknown): Record<string, unknown> {
  if (schema && typeof schema === "object" && (schema as { type?: unknown }).type === "object") return schema as Record<string, unknown>;
  return { type: "object", additionalProperties: true };
}

/** The assistant a tool name stands for (its name, or its id); an unknown one is Invalid params, as MCP says. */
async function assistantOfTool(api: OwnApi, caller: FastifyRequest, name: string): Promise<string> {
  const found = (await namedAssistants(api, caller)).find((entry) => entry.name === name || entry.assistant.assistant_id === name);
  if (!found) throw invalidParams(`Unknown tool: ${name}`);
  return found.assistant.assistant_id;
}

/**
 * tools/call: a stateless run of the assistant with the arguments as its input, through
 * POST /runs/stream (its head comes at once, so a client that leaves cancels the run,
 * the stateless default; /runs/wait answers nothing until the end, and a caller in
 * process cannot tell it the client left before then). Each step the graph finishes is
 * reported to `progress` (MCP progress notifications, when the client asked for them);
 * the result is the last values the run produced, what /runs/wait would answer. A run
 * that fails, or one refused (a 422 naming the input), is a tool error (`isError`),
 * which MCP tells apart from a protocol error.
 */
export async function callTool(
  api: OwnApi,
  caller: FastifyRequest,
  name: string,
  args: Record<string, unknown>,
  progress: (step: number, message: string) => Promise<void>,
  signal: AbortSignal,
): Promise<ToolResult> {
  const assistantId = await assistantOfTool(api, caller, name);
  const response = await api.fetch(caller, "POST", "/runs/stream", { assistant_id: assistantId, input: args, stream_mode: ["values", "updates"] }, signal);
  if (!response.ok) {
    const text = await response.text();
    return toolError(`HTTP ${response.status}: ${text}`);
  }
  let values: unknown = null;
  let step = 0;
  for await (const { event, data } of ownSseEvents(response)) {
    if (event === "values") values = data;
    else if (event === "updates") {
      step += 1;
      await progress(step, `finished ${Object.keys((data as Record<string, unknown>) ?? {}).join(", ") || "a step"}`);
    } else if (event === "error") {
      const failure = data as { error?: string; message?: string };
      return toolError(`${failure.error ?? "Error"}: ${failure.message ?? ""}`);
    }
  }
  return toolOutput(values);
}

function toolOutput(value: unknown): ToolResult {
  const result: ToolResult = { content: [{ type: "text", text: JSON.stringify(value) }], isError: false };
  if (value && typeof value === "object" && !Array.isArray(value)) result.structuredContent = value as Record<string, unknown>;
  return result;
}

function toolError(message: string): ToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}
