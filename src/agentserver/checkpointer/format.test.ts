import * as checkpointPackage from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { SlipwayStore } from "../store/store.ts";
import { EXCLUDED_METADATA_KEYS, WRITES_IDX_MAP, getCheckpointId } from "./format.ts";
import { SlipwaySaver } from "./saver.ts";

const { BaseCheckpointSaver, BaseStore } = checkpointPackage;

/** Methods a class's prototype chain defines, up to Object. */
function methodsOf(prototype: object): string[] {
  const names = new Set<string>();
  for (let p: object | null = prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const name of Object.getOwnPropertyNames(p)) if (name !== "constructor") names.add(name);
  }
  return [...names].sort();
}

describe("the checkpoint format as Slipway spells it before @langchain/langgraph-checkpoint loads", () => {
  it("has the package's constants", () => {
    expect(WRITES_IDX_MAP).toEqual(checkpointPackage.WRITES_IDX_MAP);
    expect([...EXCLUDED_METADATA_KEYS].sort()).toEqual([...checkpointPackage.EXCLUDED_METADATA_KEYS].sort());
  });

  it("reads a checkpoint id as the package does", () => {
    for (const configurable of [
      {},
      { checkpoint_id: "a" },
      { thread_ts: "b" },
      { checkpoint_id: "", thread_ts: "c" },
      { checkpoint_id: "d", thread_ts: "e" },
    ]) {
      expect(getCheckpointId({ configurable })).toBe(checkpointPackage.getCheckpointId({ configurable }));
    }
  });

  it("SlipwaySaver and SlipwayStore have every method of the base classes they implement without extending", () => {
    expect(methodsOf(BaseCheckpointSaver.prototype).filter((name) => !methodsOf(SlipwaySaver.prototype).includes(name))).toEqual([]);
    expect(methodsOf(BaseStore.prototype).filter((name) => !methodsOf(SlipwayStore.prototype).includes(name))).toEqual([]);
  });
});
