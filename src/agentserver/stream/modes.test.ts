import { describe, expect, it } from "vitest";
import { eventInModes, planStream } from "./modes.ts";

describe("stream modes", () => {
  it("let a filtered stream through its modes, their subgraph and part events, metadata and errors", () => {
    expect(eventInModes("updates", ["updates"])).toBe(true);
    expect(eventInModes("updates|child:1", ["updates"])).toBe(true);
    expect(eventInModes("messages/partial", ["messages"])).toBe(true);
    expect(eventInModes("messages", ["messages-tuple"])).toBe(true);
    expect(eventInModes("metadata", ["values"])).toBe(true);
    expect(eventInModes("error", ["values"])).toBe(true);
    expect(eventInModes("values", ["updates"])).toBe(false);
    expect(eventInModes("valuesX", ["values"])).toBe(false);
    expect(eventInModes("custom", undefined)).toBe(true);
    expect(eventInModes("custom", [])).toBe(true);
  });

  it("ask the library for what each API mode needs, always with values", () => {
    expect(planStream(["messages-tuple"], false)).toMatchObject({ libraryModes: ["messages", "values"], useEvents: false });
    expect(planStream(["messages"], false)).toMatchObject({ libraryModes: ["values"], useEvents: true });
    expect(planStream(["events"], true)).toMatchObject({ libraryModes: ["values"], useEvents: true, subgraphs: true });
    expect(planStream([], false).apiModes).toEqual(new Set(["values"]));
  });
});
