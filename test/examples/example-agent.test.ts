import { readFileSync } from "node:fs";
import { HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { graph } from "../../examples/agent/src/agent.ts";
import { checkNodeVersion } from "../../src/config/node-version.ts";

/** The example agent a new user deploys first: it must answer what agent-chat-ui sends, on the Node they have. */
describe("the example agent", () => {
  it("answers content blocks (what agent-chat-ui sends) with their text, not their JSON", async () => {
    const blocks = [
      { type: "text", text: "hello" },
      { type: "text", text: "there" },
    ];
    const state = await graph.invoke({ messages: [new HumanMessage({ content: blocks })] });
    expect(state.messages.at(-1)?.content).toBe("You said: hello there");
    const plain = await graph.invoke({ messages: [new HumanMessage("hi")] });
    expect(plain.messages.at(-1)?.content).toBe("You said: hi");
  });

  it("streams the same answer word by word", async () => {
    const tokens: string[] = [];
    for await (const [chunk] of await graph.stream(
      { messages: [{ role: "user", content: [{ type: "text", text: "one two" }] }] },
      { streamMode: "messages" },
    )) {
      tokens.push(String(chunk.content));
    }
    expect(tokens.join("")).toBe("You said: one two");
  });

  it("its node_version runs on Node 20, 22 and 24", () => {
    const { node_version } = JSON.parse(readFileSync(new URL("../../examples/agent/langgraph.json", import.meta.url), "utf8"));
    for (const running of ["20.20.2", "22.12.0", "24.1.0"]) expect(checkNodeVersion(node_version, running).error, running).toBeUndefined();
  });
});
