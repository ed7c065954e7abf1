import { describe, expect, it } from "vitest";
import { nodeVersionProblem } from "./node-version.ts";

describe("node_version against the running Node", () => {
  it("absent: nothing to check", () => {
    expect(nodeVersionProblem(undefined, "20.20.2")).toBeUndefined();
    expect(nodeVersionProblem(null, "20.20.2")).toBeUndefined();
  });

  it("a major (string or number) must be the running major", () => {
    expect(nodeVersionProblem("20", "20.20.2")).toBeUndefined();
    expect(nodeVersionProblem(20, "v20.20.2")).toBeUndefined();
    expect(nodeVersionProblem("22", "20.20.2")).toBe(
      'the project asks for Node 22 but this server runs Node 20.20.2: run Slipway with Node 22, or set "node_version": "20" if the project works on it',
    );
    expect(nodeVersionProblem("20", "22.1.0")).toMatch(/asks for Node 20 but this server runs Node 22\.1\.0/);
  });

  it("a major.minor(.patch) is a minimum within that major", () => {
    expect(nodeVersionProblem("20.19", "20.20.2")).toBeUndefined();
    expect(nodeVersionProblem("20.20.2", "20.20.2")).toBeUndefined();
    expect(nodeVersionProblem("20.20.3", "20.20.2")).toMatch(/asks for Node 20\.20\.3 or later but this server runs Node 20\.20\.2: run Slipway with Node 20\.20\.3 or a later 20\.x/);
    expect(nodeVersionProblem("20.21", "20.20.2")).toMatch(/or later/);
    expect(nodeVersionProblem("22.1", "20.20.2")).toMatch(/asks for Node 22\.1 but/);
  });

  it("below the vendor's minimum, or not a version: refused", () => {
    expect(nodeVersionProblem("18", "20.20.2")).toBe("Node 18 is not supported: the minimum is 20");
    for (const bad of [">=20", "^20", "20.x", "lts", "", true, ["20"]]) {
      expect(nodeVersionProblem(bad, "20.20.2")).toMatch(/^must be a major version such as "20"/);
    }
  });
});
