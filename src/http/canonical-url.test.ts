import { describe, expect, it } from "vitest";
import { canonicalUrl } from "./canonical-url.ts";

const API_HOST = { prefix: "/api-host", own: ["/api-host/openapi.json"] };

describe("canonical request targets", () => {
  it.each([
    ["/v2/deployments", "/v2/deployments"],
    ["/api-host/v2/deployments?limit=1", "/v2/deployments?limit=1"],
    ["/api-host", "/"],
    ["/api-host?x=1", "/?x=1"],
    ["/%61pi-host/v2/deployments", "/v2/deployments"],
    ["/api-host//v2/x", "//v2/x"],
    ["http://elsewhere.example/api-host/v2/x", "/v2/x"],
    ["HTTPS://elsewhere.example:8443/v2/x?y", "/v2/x?y"],
    ["http://elsewhere.example", "/"],
    ["/api-host/openapi.json", "/api-host/openapi.json"],
    ["/api-host/openapi.json?x", "/api-host/openapi.json?x"],
    // What the router does not serve stays as it is (a 404).
    ["/API-HOST/v2/x", "/API-HOST/v2/x"],
    ["/api-hostile/v2/x", "/api-hostile/v2/x"],
    ["//api-host/v2/x", "//api-host/v2/x"],
    ["/api-host%2Fv2/x", "/api-host%2Fv2/x"],
    ["*", "*"],
    ["http://h?x", "/?x"],
  ])("%s is %s", (url, canonical) => {
    expect(canonicalUrl(url, [API_HOST])).toBe(canonical);
  });

  it("takes off no prefix when the app has no alias", () => {
    expect(canonicalUrl("/api-host/v2/x")).toBe("/api-host/v2/x");
    expect(canonicalUrl("http://h/threads")).toBe("/threads");
  });
});
