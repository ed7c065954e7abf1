import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

/**
 * The checks of the version matrix, through the official SDK, against any server that
 * serves the matrix project (test/fixtures/version-matrix): Slipway's, or the
 * vendor's dev server (scripts/vendor-version-matrix.ts). Each check answers "ok" or
 * what went wrong, so one broken feature does not hide the others.
 */
export const CHECKS = [
  "wait",
  "values",
  "updates",
  "messages-tuple",
  "state",
  "history",
  "interrupt",
  "subgraph",
  "schemas",
  "metadata",
  "partial-input",
] as const;
export type CheckName = (typeof CHECKS)[number];
export type CheckResults = Record<CheckName, string>;

interface MatrixOptions {
  /** The project's installed @langchain/langgraph version, which run metadata must name. */
  langgraph: string;
  /** Whether this version has interrupt() and Command (0.2.31 on); older graphs pause before a node. */
  hasCommand: boolean;
  /** Checks of features the library itself lacks at this version, with why: answered "n/a: why". */
  lacks?: Partial<Record<CheckName, string>>;
}

type Message = { type: string; content: unknown };
type ChatState = { messages: Message[]; turns: number; provider?: string; summary?: string };
type Schema = {
  type?: unknown;
  properties?: Record<string, Schema>;
  items?: Schema;
  enum?: unknown[];
  description?: string;
  definitions?: Record<string, Schema>;
  [key: string]: unknown;
};

const INPUT = { messages: [{ role: "human", content: "hi" }], provider: "openai" };

export async function runVersionChecks(apiUrl: string, options: MatrixOptions): Promise<CheckResults> {
  const client = new Client({ apiUrl });
  const results = {} as CheckResults;
  const check = async (name: CheckName, body: () => Promise<void>) => {
    const gap = options.lacks?.[name];
    if (gap) {
      results[name] = `n/a: ${gap}`;
      return;
    }
    try {
      await body();
      results[name] = "ok";
    } catch (error) {
      results[name] = describe(error);
    }
  };
  const assistants = await client.assistants.search({ graphId: "chat" });
  const chatAssistant = assistants[0]?.assistant_id ?? "chat";
  const thread = await client.threads.create();

  await check("wait", async () => {
    const values = (await client.runs.wait(thread.thread_id, "chat", { input: INPUT })) as ChatState | null;
    assert.ok(values, `runs.wait answered ${JSON.stringify(values)}`);
    assert.deepEqual(
      values.messages.map((m) => [m.type, m.content]),
      [
        ["human", "hi"],
        ["ai", "You said: hi"],
      ],
    );
    assert.equal(values.turns, 1);
    assert.equal(values.summary, "2 messages", "the subgraph's write");
  });

  const streamed: Array<{ event: string; data: unknown }> = [];
  const streamThread = await client.threads.create();
  try {
    for await (const part of client.runs.stream(streamThread.thread_id, "chat", { input: INPUT, streamMode: ["values", "updates", "messages-tuple"] }))
      streamed.push(part);
  } catch (error) {
    streamed.push({ event: "error", data: (error as Error).message });
  }
  const events = (name: string) => streamed.filter((p) => p.event === name);
  await check("values", async () => {
    const last = events("values").at(-1)?.data as ChatState | undefined;
    assert.ok(last, `no values event among ${streamed.map((p) => p.event).join(", ")}`);
    assert.equal(last.messages.at(-1)?.content, "You said: hi");
  });
  await check("updates", async () => {
    const nodes = events("updates").flatMap((p) => Object.keys(p.data as object));
    assert.deepEqual(nodes, ["model", "child"]);
  });
  await check("messages-tuple", async () => {
    const tokens = events("messages").map((p) => (p.data as [{ content: string }, unknown])[0].content);
    assert.equal(tokens.join(""), "You said: hi");
    assert.ok(tokens.length > 1, `one chunk, not tokens: ${JSON.stringify(tokens)}`);
  });

  await check("state", async () => {
    const state = await client.threads.getState<ChatState>(thread.thread_id);
    assert.equal(state.values.messages.at(-1)?.content, "You said: hi");
    assert.deepEqual(state.next, []);
    assert.ok(state.checkpoint?.checkpoint_id, "the state names no checkpoint");
  });
  await check("history", async () => {
    const history = await client.threads.getHistory<ChatState>(thread.thread_id);
    assert.ok(history.length >= 3, `${history.length} checkpoints`);
    assert.deepEqual(history.at(-1)?.next, ["__start__"]);
    assert.equal(history[0]!.values.summary, "2 messages");
  });
  await check("metadata", async () => {
    const [latest] = await client.threads.getHistory(thread.thread_id, { limit: 1 });
    assert.equal(latest?.metadata?.langgraph_version, options.langgraph);
  });

  await check("interrupt", async () => {
    const asked = await client.threads.create();
    await client.runs.wait(asked.thread_id, "approval", { input: { messages: [] } });
    assert.equal((await client.threads.get(asked.thread_id)).status, "interrupted");
    assert.deepEqual((await client.threads.getState(asked.thread_id)).next, ["ask"]);
    const resumed = (await client.runs.wait(asked.thread_id, "approval", options.hasCommand ? { command: { resume: "ok" } } : { input: null })) as ChatState;
    assert.equal(resumed?.messages?.at(-1)?.content, options.hasCommand ? "answer: ok" : "answer: resumed");
    assert.equal((await client.threads.get(asked.thread_id)).status, "idle");
  });

  await check("subgraph", async () => {
    const sub = await client.threads.create();
    const seen: string[] = [];
    for await (const part of client.runs.stream(sub.thread_id, "chat", { input: INPUT, streamMode: "updates", streamSubgraphs: true })) seen.push(part.event);
    assert.ok(
      seen.some((e) => e.startsWith("updates|child:")),
      `no subgraph events among ${seen.join(", ")}`,
    );
    const subgraphs = await client.assistants.getSubgraphs(chatAssistant);
    assert.deepEqual(Object.keys(subgraphs), ["child"]);
  });

  await check("schemas", async () => {
    const schemas = await client.assistants.getSchemas(chatAssistant);
    const state = schemas.state_schema as Schema;
    assert.deepEqual(Object.keys(state.properties ?? {}), ["messages", "provider", "turns", "summary"]);
    assert.deepEqual(state.properties!.provider, { type: "string", enum: ["anthropic", "openai"], description: "Which provider answers." });
    assert.deepEqual(state.properties!.turns, { type: "number", description: "Turns taken so far." });
    assert.equal(state.properties!.messages!.langgraph_type, "messages");
    assert.ok(Array.isArray(state.definitions?.BaseMessage?.oneOf), "no BaseMessage definition as the vendor writes it");
    assert.equal((state.definitions?.HumanMessage?.properties?.type as Schema | undefined)?.const, "human");
  });

  // A client's input without what the graph needs is accepted (the vendor's server does
  // not check input against the graph): the run ends in error with the graph's message,
  // and the thread and its state answer (data-enrichment-js on 0.2.8 got 500s from them).
  await check("partial-input", async () => {
    const partial = await client.threads.create();
    const run = await client.runs.create(partial.thread_id, "enrich", { input: { messages: [{ role: "human", content: "hi" }] } });
    await client.runs.join(partial.thread_id, run.run_id);
    assert.equal((await client.runs.get(partial.thread_id, run.run_id)).status, "error");
    assert.equal((await client.threads.get(partial.thread_id)).status, "error");
    const state = await client.threads.getState(partial.thread_id);
    assert.deepEqual(state.next, ["research"]);
    assert.match(JSON.stringify(state.tasks[0]?.error), /the input has no topic/);
  });
  return results;
}

/** An assertion's failure with what was found, on one line. */
function describe(error: unknown): string {
  if (error instanceof assert.AssertionError && !error.generatedMessage) return error.message.slice(0, 400);
  if (error instanceof assert.AssertionError) return `expected ${JSON.stringify(error.expected)}, got ${JSON.stringify(error.actual)}`.slice(0, 400);
  return String((error as Error).message ?? error)
    .split("\n")[0]!
    .slice(0, 400);
}
