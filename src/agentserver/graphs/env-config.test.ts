import { describe, expect, it } from "vitest";
import { readAssistantDefaults } from "./env-config.ts";

describe("LANGGRAPH_CONFIG", () => {
  it("maps each graph of the project to its system assistant's config and context", () => {
    const defaults = readAssistantDefaults(
      JSON.stringify({ agent: { configurable: { model: "m" }, recursion_limit: 5, context: { tone: "dry" } }, other: {}, unknown: { configurable: {} } }),
      ["agent", "other"],
    );
    expect(Object.fromEntries(defaults)).toEqual({
      agent: { config: { configurable: { model: "m" }, recursion_limit: 5 }, context: { tone: "dry" } },
      other: { config: {}, context: {} },
    });
  });

  it("unset or blank: no defaults", () => {
    expect(readAssistantDefaults(undefined, ["agent"]).size).toBe(0);
    expect(readAssistantDefaults("  ", ["agent"]).size).toBe(0);
  });

  it("malformed: an error naming what is wrong", () => {
    expect(() => readAssistantDefaults("{", ["agent"])).toThrow(/^LANGGRAPH_CONFIG: not valid JSON/);
    expect(() => readAssistantDefaults("[]", ["agent"])).toThrow(/^LANGGRAPH_CONFIG: must be a JSON object/);
    expect(() => readAssistantDefaults('{"agent": 1}', ["agent"])).toThrow(/^LANGGRAPH_CONFIG\.agent: must be an object/);
    expect(() => readAssistantDefaults('{"agent": {"context": "x"}}', ["agent"])).toThrow(/^LANGGRAPH_CONFIG\.agent\.context: must be an object/);
    expect(() => readAssistantDefaults('{"agent": {"configurable": []}}', ["agent"])).toThrow(/^LANGGRAPH_CONFIG\.agent\.configurable: must be an object/);
  });
});
