import { describe, expect, it } from "vitest";
import { repoKey } from "./repo-key.ts";

describe("repoKey", () => {
  it("gives one key to every spelling of a repository a push event carries", () => {
    const key = "git.example.com/team/agent";
    for (const url of [
      "https://git.example.com/team/agent.git",
      "https://git.example.com/team/agent",
      "http://GIT.example.com/Team/Agent/",
      "ssh://git@git.example.com/team/agent.git",
      "git@git.example.com:team/agent.git",
      "git://git.example.com/team/agent.git",
    ]) {
      expect(repoKey(url)).toBe(key);
    }
    expect(repoKey("https://git.example.com/team/other.git")).not.toBe(key);
  });
});
