import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/**
 * A stand-in for the model providers on loopback, so that public LangGraph.js projects
 * can run end to end without a key or the network: an OpenAI-compatible
 * `/v1/chat/completions` and `/v1/embeddings`, and an Anthropic-compatible `/v1/messages`,
 * each streamed or not. When tools are offered and the conversation has no tool result
 * yet, it calls the first tool with arguments made from its schema; otherwise it answers
 * in words. Every request is counted, so the trial can tell a model was reached.
 */
export interface ModelStandIn {
  url: string;
  requests: string[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

export async function startModelStandIn(): Promise<ModelStandIn> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    void readJson(request).then((body) => {
      const path = (request.url ?? "").split("?")[0].replace(/^\/v1/, "");
      requests.push(path);
      if (path.endsWith("/chat/completions")) return openAiChat(body, response);
      if (path.endsWith("/embeddings")) return openAiEmbeddings(body, response);
      if (path.endsWith("/messages")) return anthropicMessages(body, response);
      if (path.endsWith("/models")) return sendJson(response, { object: "list", data: [{ id: "stand-in", object: "model" }] });
      sendJson(response, { error: { message: `the stand-in does not serve ${path}` } }, 404);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { url, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function readJson(request: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
  } catch {
    return {};
  }
}

function sendJson(response: ServerResponse, body: unknown, status = 200): void {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

/** Arguments that satisfy a JSON schema well enough for a tool call. */
function sampleOf(schema: Json | undefined): unknown {
  if (!schema) return {};
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (schema.enum && Array.isArray(schema.enum)) return schema.enum[0];
  if (type === "object" || schema.properties) {
    const out: Json = {};
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) out[name] = sampleOf(property);
    return out;
  }
  if (type === "array") return [sampleOf(schema.items as Json | undefined)];
  if (type === "number" || type === "integer") return 1;
  if (type === "boolean") return true;
  return "LangGraph";
}

interface Reply {
  text?: string;
  tool?: { name: string; args: unknown; id: string };
}

/** What to answer: a call of the first tool offered, until a tool has answered; then words. */
function decide(tools: Array<{ name: string; schema?: Json }>, toolAnswered: boolean): Reply {
  if (tools.length > 0 && !toolAnswered) {
    const tool = tools[0];
    return { tool: { name: tool.name, args: sampleOf(tool.schema), id: `call_${Math.random().toString(36).slice(2, 10)}` } };
  }
  return { text: "This is the stand-in model's answer." };
}

function openAiChat(body: Json, response: ServerResponse): void {
  const messages = (body.messages ?? []) as Json[];
  const tools = ((body.tools ?? []) as Json[]).map((t) => ({ name: String((t.function as Json)?.name), schema: (t.function as Json)?.parameters as Json }));
  const reply = decide(
    tools,
    messages.some((m) => m.role === "tool"),
  );
  const model = String(body.model ?? "stand-in");
  const id = `chatcmpl-${Date.now()}`;
  const toolCalls = reply.tool
    ? [{ id: reply.tool.id, type: "function", function: { name: reply.tool.name, arguments: JSON.stringify(reply.tool.args) } }]
    : undefined;
  const finish = reply.tool ? "tool_calls" : "stop";
  const usage = { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 };
  if (!body.stream) {
    return void sendJson(response, {
      id,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [
        { index: 0, message: { role: "assistant", content: reply.text ?? null, ...(toolCalls ? { tool_calls: toolCalls } : {}) }, finish_reason: finish },
      ],
      usage,
    });
  }
  response.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: Json, finishReason: string | null = null, extra: Json = {}) =>
    response.write(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`,
    );
  chunk({ role: "assistant", content: "" });
  if (reply.text) for (const word of reply.text.split(/(?<= )/)) chunk({ content: word });
  if (toolCalls) chunk({ tool_calls: toolCalls.map((call, index) => ({ index, ...call })) });
  chunk({}, finish);
  response.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model, choices: [], usage })}\n\n`);
  response.end("data: [DONE]\n\n");
}

function openAiEmbeddings(body: Json, response: ServerResponse): void {
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const data = inputs.map((input, index) => {
    const text = String(input);
    const vector = Array.from({ length: 8 }, (_, i) => ((text.charCodeAt(i % Math.max(text.length, 1)) || 1) % 17) / 17);
    return { object: "embedding", index, embedding: vector };
  });
  sendJson(response, { object: "list", data, model: String(body.model ?? "stand-in"), usage: { prompt_tokens: 1, total_tokens: 1 } });
}

function anthropicMessages(body: Json, response: ServerResponse): void {
  const messages = (body.messages ?? []) as Json[];
  const tools = ((body.tools ?? []) as Json[]).map((t) => ({ name: String(t.name), schema: t.input_schema as Json }));
  const answered = messages.some((m) => Array.isArray(m.content) && (m.content as Json[]).some((block) => block.type === "tool_result"));
  const reply = decide(tools, answered);
  const id = `msg_${Date.now()}`;
  const model = String(body.model ?? "stand-in");
  const content = reply.tool ? [{ type: "tool_use", id: reply.tool.id, name: reply.tool.name, input: reply.tool.args }] : [{ type: "text", text: reply.text }];
  const stop = reply.tool ? "tool_use" : "end_turn";
  const usage = { input_tokens: 10, output_tokens: 10 };
  if (!body.stream) return void sendJson(response, { id, type: "message", role: "assistant", model, content, stop_reason: stop, stop_sequence: null, usage });
  response.writeHead(200, { "content-type": "text/event-stream" });
  const send = (event: string, data: Json) => response.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  send("message_start", {
    message: {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 0 },
    },
  });
  if (reply.tool) {
    send("content_block_start", { index: 0, content_block: { type: "tool_use", id: reply.tool.id, name: reply.tool.name, input: {} } });
    send("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(reply.tool.args) } });
  } else {
    send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    for (const word of reply.text!.split(/(?<= )/)) send("content_block_delta", { index: 0, delta: { type: "text_delta", text: word } });
  }
  send("content_block_stop", { index: 0 });
  send("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 10 } });
  send("message_stop", {});
  response.end();
}
