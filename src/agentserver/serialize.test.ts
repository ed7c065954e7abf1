import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { toWire, valuesToWire } from "./serialize.ts";

const state = () => ({
  messages: [new HumanMessage({ content: "hi", id: "h1" }), new AIMessage({ content: "hello", id: "a1" })],
  count: 3n,
  note: null,
  gone: undefined,
});

describe("valuesToWire", () => {
  it("writes a state's values as toWire does, key by key", () => {
    const values = state();
    expect(valuesToWire(values)).toEqual(toWire(values));
    expect(valuesToWire(values)).toEqual({
      messages: [expect.objectContaining({ type: "human", content: "hi", id: "h1" }), expect.objectContaining({ type: "ai", content: "hello", id: "a1" })],
      count: 3,
      note: null,
    });
    expect(valuesToWire([1, new HumanMessage("x")])).toEqual(toWire([1, new HumanMessage("x")]));
  });

  it("takes the converted form of a key whose value is the very object already sent, and converts the others", () => {
    const values = state();
    const sent = { raw: values as Record<string, unknown>, wire: valuesToWire(values) as Record<string, unknown> };
    const later = { ...values, messages: [...values.messages, new HumanMessage({ content: "again", id: "h2" })] };
    const sameMessages = valuesToWire({ messages: values.messages }, sent) as Record<string, unknown>;
    expect(sameMessages.messages).toBe(sent.wire.messages);
    const changed = valuesToWire(later, sent) as Record<string, unknown>;
    expect(changed.messages).not.toBe(sent.wire.messages);
    expect(changed).toEqual(toWire(later));
  });
});
