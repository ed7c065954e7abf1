import { describe, expect, it } from "vitest";
import { checkNodeVersion } from "./node-version.ts";

describe("node_version against the running Node", () => {
  it("absent: nothing to check", () => {
    expect(checkNodeVersion(undefined, "20.20.2")).toEqual({});
    expect(checkNodeVersion(null, "20.20.2")).toEqual({});
  });

  it("the running major (string or number): runs, nothing to say", () => {
    expect(checkNodeVersion("20", "20.20.2")).toEqual({});
    expect(checkNodeVersion(20, "v20.20.2")).toEqual({});
  });

  it('a major below the running one: runs, with a warning (a template\'s "20" on Node 22 or 24)', () => {
    expect(checkNodeVersion("20", "22.1.0")).toEqual({
      warning: 'the project asks for Node 20; it runs on this server\'s Node 22.1.0, a later major (set "node_version": "22" to say it is meant to)',
    });
    expect(checkNodeVersion(20, "24.0.0").warning).toMatch(/runs on this server's Node 24\.0\.0/);
    expect(checkNodeVersion("20.19", "22.1.0")).toEqual({ warning: expect.stringMatching(/asks for Node 20\.19; it runs/) });
    expect(checkNodeVersion("20", "22.1.0").error).toBeUndefined();
  });

  it("a major above the running one: refused, saying why and what to change", () => {
    expect(checkNodeVersion("22", "20.20.2")).toEqual({
      error:
        "the project asks for Node 22 but this server runs Node 20.20.2, an older major: the project may use what Node 22 added. " +
        'Run Slipway with Node 22 or later, or set "node_version": "20" if the project works on Node 20',
    });
    expect(checkNodeVersion("22.1", "20.20.2").error).toMatch(/asks for Node 22\.1 but this server runs Node 20\.20\.2, an older major/);
  });

  it("a major.minor(.patch) is a minimum within that major", () => {
    expect(checkNodeVersion("20.19", "20.20.2")).toEqual({});
    expect(checkNodeVersion("20.20.2", "20.20.2")).toEqual({});
    expect(checkNodeVersion("20.20.3", "20.20.2").error).toMatch(
      /asks for Node 20\.20\.3 or later but this server runs Node 20\.20\.2: run Slipway with Node 20\.20\.3 or a later 20\.x/,
    );
    expect(checkNodeVersion("20.21", "20.20.2").error).toMatch(/or later/);
  });

  it("below the vendor's minimum, or not a version: refused", () => {
    expect(checkNodeVersion("18", "20.20.2")).toEqual({ error: "Node 18 is not supported: the minimum is 20" });
    for (const bad of [">=20", "^20", "20.x", "lts", "", true, ["20"]]) {
      expect(checkNodeVersion(bad, "20.20.2").error).toMatch(/^must be a major version such as "20"/);
    }
  });
});
