import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PolicyError, compilePolicy } from "./compile.ts";
import { DEFAULT_RULES } from "./default-policy.ts";
import { loadPolicyFile, policyFromText } from "./policy-file.ts";

const yaml = (text: string) => policyFromText(text, "limits.yaml");

describe("policy files", () => {
  it("extends the table: overrides fields of a built-in rule, removes one, adds one", () => {
    const rules = yaml(`
rules:
  - name: commits-api-key
    limit: { us: 20000/60, eu: 4000/60 }
  - name: runs-stats-api-key
    remove: true
  - name: exports-api-key
    category: Exports
    identity: x-api-key
    match: POST /exports
    limit: 5/60
`);
    const eu = compilePolicy(rules, "eu");
    expect(eu.specific.find((rule) => rule.name === "commits-api-key")).toMatchObject({ limit: 4000, windowSeconds: 60, category: "Commits" });
    expect(eu.specific.some((rule) => rule.name === "runs-stats-api-key")).toBe(false);
    expect(eu.specific.find((rule) => rule.name === "exports-api-key")).toMatchObject({ identity: "api-key", limit: 5 });
    expect(rules).toHaveLength(DEFAULT_RULES.length);
  });

  it("replaces the table", () => {
    const rules = policyFromText(
      JSON.stringify({ mode: "replace", rules: [{ name: "everyone", category: "All", tier: "catch-all", identity: "IP", limit: "10/1" }] }),
      "limits.json",
    );
    expect(rules).toEqual([{ name: "everyone", category: "All", tier: "catch-all", identity: "ip", limit: "10/1" }]);
  });

  it("loads from disk, YAML or JSON by extension", async () => {
    const dir = mkdtempSync(join(tmpdir(), "slipway-policy-"));
    writeFileSync(join(dir, "p.json"), JSON.stringify({ rules: [{ name: "catch-all-ip", limit: "5/60" }] }));
    const rules = await loadPolicyFile(join(dir, "p.json"));
    expect(compilePolicy(rules, "us").catchAll[0]).toMatchObject({ limit: 5, windowSeconds: 60 });
    await expect(loadPolicyFile(join(dir, "missing.yaml"))).rejects.toThrow(/missing\.yaml: cannot be read/);
  });

  it.each([
    ["not: [valid", /limits\.yaml: not valid YAML/],
    ["- just a list", /expected an object with a "rules" list/],
    ["rules: {}", /"rules" must be a list/],
    ["mode: merge\nrules: []", /mode must be "extend" or "replace"/],
    ["rulez: []", /unknown field "rulez"/],
    ["rules:\n  - category: X", /rule 1: "name" is required/],
    ["rules:\n  - name: new-rule\n    category: X\n    identity: ip", /rule 1 \("new-rule"\): a new rule needs "limit", "match"/],
    ["rules:\n  - name: commits-api-key\n    limit: lots", /rule 1 \("commits-api-key"\): limit "lots" is not "count\/seconds"/],
    ["rules:\n  - name: commits-api-key\n    limit: { us: 1/60 }", /rule 1 \("commits-api-key"\): limit: no value for region eu/],
    ["rules:\n  - name: commits-api-key\n    limit: { us: 1/60, eu: 1/60, asia: 1/60 }", /unknown region "asia"/],
    [
      "rules:\n  - name: x\n    category: X\n    identity: ip\n    match: [FETCH /x]\n    limit: 1/1",
      /rule 1 \("x"\): match "FETCH \/x": "FETCH" is not an HTTP method/,
    ],
    ["rules:\n  - name: x\n    category: X\n    identity: robots\n    match: /x\n    limit: 1/1", /rule 1 \("x"\): identity "robots"/],
    [
      "rules:\n  - name: x\n    category: X\n    identity: ip\n    tier: default\n    limit: 1/1",
      /rule 1 \("x"\): a default rule is for identity api-key or user/,
    ],
    ["rules:\n  - name: x\n    category: X\n    identity: ip\n    match: /x\n    limit: 0/10", /the count must be at least 1/],
    ["rules:\n  - name: x\n    category: X\n    identity: ip\n    match: /x\n    limit: 1/999999", /the interval must be 1 to 86400 seconds/],
    ["rules:\n  - name: x y\n    category: X\n    identity: ip\n    match: /x\n    limit: 1/1", /rule 1 \("x y"\): name must be letters/],
    ["rules:\n  - name: ghost\n    remove: true", /no built-in rule "ghost" to remove/],
    ["rules:\n  - name: catch-all-ip\n    remove: true\n    limit: 1/1", /a removed rule takes no other fields/],
    [
      "rules:\n  - name: catch-all-ip\n    limit: 1/1\n  - name: catch-all-ip\n    limit: 2/1",
      /rule 2 \("catch-all-ip"\): the name "catch-all-ip" is used by an earlier rule of this file/,
    ],
    ["rules:\n  - name: catch-all-ip\n    limt: 1/1", /rule 1 \("catch-all-ip"\): unknown field "limt"/],
  ])("refuses %j, naming the problem", (text, message) => {
    expect(() => yaml(text)).toThrow(PolicyError);
    expect(() => yaml(text)).toThrow(message);
  });

  it("checks both regions whatever region is in use", () => {
    expect(() => yaml("rules:\n  - name: commits-user\n    limit: { us: 1/60, eu: x }")).toThrow(/commits-user.*limit "x"/);
  });
});
