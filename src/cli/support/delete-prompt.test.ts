import { describe, expect, it } from "vitest";
import { deletePrompt } from "./delete-prompt.ts";

describe("the delete prompt", () => {
  it("speaks of one deployment when there is one, and counts them when there are several", () => {
    expect(deletePrompt([{ name: "agent", id: "a1" }])).toBe("Delete the deployment agent (a1), with its revisions, logs and data?");
    expect(
      deletePrompt([
        { name: "a", id: "1" },
        { name: "b", id: "2" },
      ]),
    ).toBe("Delete the 2 deployments a (1), b (2), with their revisions, logs and data?");
  });
});
