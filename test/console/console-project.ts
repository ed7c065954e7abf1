import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXAMPLE_AGENT } from "../pipeline/sample-project.ts";

/** Markup that would run if any of the console's text ever became HTML. */
export const XSS = `<img src=x onerror="window.__xss='html'">`;
export const JS_URL = "javascript:window.__xss='url'";
/** The interrupting node of `approve` and what it asks (node names may hold neither ":" nor "|"). */
export const APPROVE_NODE = `ask ${XSS}`;
export const APPROVE_QUESTION = `approve ${XSS} ${JS_URL}?`;
/** The arguments of the tool call `tools` makes (its tool then answers "found <markup>"). */
export const TOOL_ARGS = { query: XSS, link: JS_URL };

/**
 * The project the console test uploads: the example echo agent, plus `slow` (a chat model
 * that streams a word every 100 ms for a minute, to be stopped), `boom` (fails with
 * markup in its error, and prints markup to its log when loaded) and `approve` (a node
 * named with markup asks with interrupt(), markup in the question, then answers what it
 * was told; a conditional edge leads on) and `tools` (a model streams a tool call whose
 * arguments hold markup, in pieces; the tool answers with markup).
 */
export function writeConsoleProject(dir: string): void {
  mkdirSync(join(dir, "src"), { recursive: true });
  cpSync(EXAMPLE_AGENT, dir, { recursive: true, filter: (source) => !source.includes("node_modules") });
  const files: Record<string, string> = {
    "langgraph.json": JSON.stringify(
      {
        node_version: "20",
        graphs: {
          agent: "./src/agent.ts:graph",
          slow: "./src/slow.ts:graph",
          boom: "./src/boom.ts:graph",
          approve: "./src/approve.ts:graph",
          tools: "./src/tools.ts:graph",
        },
        env: {},
      },
      null,
      2,
    ),
    "src/tools.ts": [
      'import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";',
      'import { AIMessageChunk, ToolMessage } from "@langchain/core/messages";',
      'import { ChatGenerationChunk } from "@langchain/core/outputs";',
      'import { EchoChatModel } from "./echo-model.ts";',
      "/** Streams one tool call as a provider does: the name first, the arguments' JSON in pieces. */",
      "class ToolCallingModel extends EchoChatModel {",
      "  async *_streamResponseChunks(_messages: unknown, _options: unknown, runManager?: { handleLLMNewToken(token: string, idx?: unknown, runId?: string, parentRunId?: string, tags?: string[], fields?: { chunk: ChatGenerationChunk }): Promise<void> }) {",
      `    const args = ${JSON.stringify(JSON.stringify(TOOL_ARGS))};`,
      "    const pieces = [args.slice(0, 9), args.slice(9, 30), args.slice(30)];",
      "    for (const [i, piece] of pieces.entries()) {",
      '      const chunk = { index: 0, args: piece, ...(i === 0 ? { id: "call_1", name: "lookup" } : {}) };',
      '      const generation = new ChatGenerationChunk({ text: "", message: new AIMessageChunk({ content: "", tool_call_chunks: [chunk] }) });',
      "      yield generation;",
      "      // The chunk goes with the token: the messages stream sends it, tool call pieces and all.",
      '      await runManager?.handleLLMNewToken("", undefined, undefined, undefined, undefined, { chunk: generation });',
      "    }",
      "  }",
      "}",
      "const model = new ToolCallingModel({});",
      "export const graph = new StateGraph(MessagesAnnotation)",
      '  .addNode("call", async (state) => ({ messages: [await model.invoke(state.messages)] }))',
      `  .addNode("tool", async () => ({ messages: [new ToolMessage({ tool_call_id: "call_1", content: ${JSON.stringify(`found ${XSS}`)} })] }))`,
      '  .addEdge(START, "call")',
      '  .addEdge("call", "tool")',
      '  .addEdge("tool", END)',
      "  .compile();",
      "",
    ].join("\n"),
    "src/slow.ts": [
      'import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";',
      'import { AIMessageChunk } from "@langchain/core/messages";',
      'import { ChatGenerationChunk } from "@langchain/core/outputs";',
      'import { EchoChatModel } from "./echo-model.ts";',
      "class SlowModel extends EchoChatModel {",
      "  async *_streamResponseChunks(_messages: unknown, _options: unknown, runManager?: { handleLLMNewToken(token: string): Promise<void> }) {",
      "    for (let i = 1; i <= 600; i++) {",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a line of the fixture project's source, where the template literal runs
      "      const word = `word${i} `;",
      "      yield new ChatGenerationChunk({ text: word, message: new AIMessageChunk({ content: word }) });",
      "      await runManager?.handleLLMNewToken(word);",
      "      await new Promise((resolve) => setTimeout(resolve, 100));",
      "    }",
      "  }",
      "}",
      "const model = new SlowModel({});",
      "export const graph = new StateGraph(MessagesAnnotation)",
      '  .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))',
      '  .addEdge(START, "agent")',
      '  .addEdge("agent", END)',
      "  .compile();",
      "",
    ].join("\n"),
    "src/boom.ts": [
      'import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";',
      `console.log(${JSON.stringify(`loaded boom ${XSS} ${JS_URL}`)});`,
      "export const graph = new StateGraph(MessagesAnnotation)",
      `  .addNode("agent", async () => { throw new Error(${JSON.stringify(`boom ${XSS}`)}); })`,
      '  .addEdge(START, "agent")',
      '  .addEdge("agent", END)',
      "  .compile();",
      "",
    ].join("\n"),
    "src/approve.ts": [
      'import { END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";',
      `const ASK = ${JSON.stringify(APPROVE_NODE)};`,
      "export const graph = new StateGraph(MessagesAnnotation)",
      "  .addNode(ASK, async () => {",
      `    const answer = interrupt({ question: ${JSON.stringify(APPROVE_QUESTION)} });`,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a line of the fixture project's source, where the template literal runs
      '    return { messages: [{ role: "ai", content: `answer: ${JSON.stringify(answer)}` }] };',
      "  })",
      '  .addNode("record", async () => ({}))',
      "  .addEdge(START, ASK)",
      '  .addConditionalEdges(ASK, (state) => (state.messages.length > 1000 ? END : "record"), ["record", END])',
      '  .addEdge("record", END)',
      "  .compile();",
      "",
    ].join("\n"),
  };
  for (const [path, content] of Object.entries(files)) writeFileSync(join(dir, path), content);
}

/** A project whose build fails at once: its langgraph.json names a graph file that is not there. */
export function writeBrokenProject(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "langgraph.json"), JSON.stringify({ node_version: "20", graphs: { agent: `./src/${XSS}.ts:graph` } }));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "broken", version: "1.0.0", type: "module" }));
}
