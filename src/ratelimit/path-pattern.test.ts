import { describe, expect, it } from "vitest";
import { MatchSyntaxError, normalizePath, parseMatch, pathForms } from "./path-pattern.ts";

const UUID = "0f8fad5b-d9cb-469f-a165-70867728950e";
const hits = (expression: string, path: string) => {
  const matcher = parseMatch(expression);
  return pathForms(path).some((form) => matcher.path?.(form) ?? true);
};

describe("match expressions", () => {
  it.each([
    ["/repos", "/repos", true],
    ["/repos", "/repos/acme/x", true],
    ["/repos", "/repository", false],
    ["/repos", "/x/repos", false],
    ["/repos", "/api/v1/repos/acme", true],
    ["exactly /runs", "/runs", true],
    ["exactly /runs", "/runs/batch", false],
    ["exactly /runs/{uuid}", `/runs/${UUID}`, true],
    ["exactly /runs/{uuid}", `/api/v1/runs/${UUID.toUpperCase()}`, true],
    ["exactly /runs/{uuid}", "/runs/stats", false],
    ["exactly /runs/{uuid}", `/runs/${UUID}/share`, false],
    ["/runs/{uuid}", `/runs/${UUID}/share`, true],
    ["containing /charts", "/api/v1/sessions/x/charts/y", true],
    ["containing /charts", "/chart", false],
    ["*/trigger", "/automations/1/trigger", true],
    ["*/trigger", "/automations/1/trigger/x", false],
    ["*/v1/metadata/submit", "/api/v1/metadata/submit", true],
  ])("%s against %s: %s", (expression, path, expected) => {
    expect(hits(expression, path)).toBe(expected);
  });

  it("reads an optional method, and ANY or no path", () => {
    expect(parseMatch("post /runs/query")).toMatchObject({ method: "POST" });
    expect(parseMatch("OPTIONS").method).toBe("OPTIONS");
    expect(parseMatch("OPTIONS").path).toBeUndefined();
    expect(parseMatch("ANY /x").method).toBeUndefined();
  });

  it.each([
    ["", /empty/],
    ["FETCH /x", /"FETCH" is not an HTTP method/],
    ["GET repos", /must start with "\/"/],
    ["/runs/{id}", /only placeholder is a whole \{uuid\}/],
    ["containing /a {uuid}", /takes exactly one path/],
    ["GET /a /b", /unexpected "\/b"/],
    ["*/", /names no path/],
  ])("refuses %j", (expression, message) => {
    expect(() => parseMatch(expression)).toThrow(MatchSyntaxError);
    expect(() => parseMatch(expression)).toThrow(message);
  });
});

describe("path normalization", () => {
  it.each([
    ["/runs/stats?x=1", "/runs/stats"],
    ["//runs//stats/", "/runs/stats"],
    ["/runs/%73tats", "/runs/stats"],
    ["/a%2Fb/c", "/a%2Fb/c"],
    ["/bad%zz", "/bad%zz"],
    ["/", "/"],
  ])("%s is %s", (url, path) => {
    expect(normalizePath(url)).toBe(path);
  });

  it("tests both the path and the path without /api/v1", () => {
    expect(pathForms("/api/v1/runs/query")).toEqual(["/api/v1/runs/query", "/runs/query"]);
    expect(pathForms("/api/v1")).toEqual(["/api/v1", "/"]);
    expect(pathForms("/api/v10/x")).toEqual(["/api/v10/x"]);
  });
});
