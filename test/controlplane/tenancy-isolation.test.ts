import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BootstrapResult } from "../../src/controlplane/tenancy/service.ts";
import { BACKENDS } from "../support/backends.ts";
import { as, json, openHarness, type Harness } from "./tenancy-harness.ts";

/**
 * One workspace never sees or changes another's resources: a foreign id answers 404,
 * exactly like a missing one, across workspaces of one organization and across
 * organizations.
 */
describe.each(BACKENDS)("tenant isolation on %s", (backend) => {
  let h: Harness;
  let owner: Record<string, string>;
  const strangers: [string, Record<string, string>][] = [];
  let integrationId: string;
  let providerId: string;
  let providerUuid: string;

  beforeAll(async () => {
    h = await openHarness(backend, { gitHosts: { allowHosts: ["127.0.0.1"] } });
    const orgA: BootstrapResult = await h.tenancy.bootstrap({ orgName: "A" });
    const orgB: BootstrapResult = await h.tenancy.bootstrap({ orgName: "B" });
    const sibling = await h.tenancy.createWorkspace(orgA.organization_id, "A2");
    owner = as(orgA.api_key, orgA.workspace_id);
    strangers.push(["a sibling workspace of the same organization", as(orgA.api_key, sibling.workspace_id)]);
    strangers.push(["another organization", as(orgB.api_key, orgB.workspace_id)]);

    const integration = await h.app.inject({
      method: "POST",
      url: "/v1/integrations/github/install",
      headers: owner,
      payload: { name: "private-forge", base_url: "git://127.0.0.1:9418/", token: "owner-token" },
    });
    integrationId = json(integration).id;
    const provider = await h.app.inject({
      method: "POST",
      url: "/v2/auth/providers",
      headers: owner,
      payload: {
        provider_id: "okta",
        name: "Okta",
        client_id: "owner-client",
        auth_url: "https://okta.example.test/authorize",
        token_url: "https://okta.example.test/token",
      },
    });
    providerId = json(provider).provider_id;
    providerUuid = json(provider).id;
  });
  afterAll(() => h?.close());

  it("hides the owner's resources from listings", async () => {
    for (const [who, headers] of strangers) {
      const integrations = json(await h.app.inject({ method: "GET", url: "/v1/integrations/github/install", headers }));
      expect(integrations, who).toEqual([]);
      const providers = json(await h.app.inject({ method: "GET", url: "/v2/auth/providers", headers }));
      expect(providers, who).toEqual([]);
    }
    expect(json(await h.app.inject({ method: "GET", url: "/v1/integrations/github/install", headers: owner }))).toHaveLength(1);
  });

  it("answers 404 for the owner's ids, on both mounts, for reads and writes", async () => {
    for (const [who, headers] of strangers) {
      for (const prefix of ["", "/api-host"]) {
        const requests = [
          { method: "GET" as const, url: `${prefix}/v1/integrations/github/${integrationId}/repos` },
          { method: "DELETE" as const, url: `${prefix}/v1/integrations/github/${integrationId}` },
          { method: "GET" as const, url: `${prefix}/v2/auth/providers/${providerId}` },
          { method: "GET" as const, url: `${prefix}/v2/auth/providers/${providerUuid}` },
          { method: "PATCH" as const, url: `${prefix}/v2/auth/providers/${providerId}`, payload: { name: "hijacked" } },
          { method: "DELETE" as const, url: `${prefix}/v2/auth/providers/${providerUuid}` },
        ];
        for (const request of requests) {
          const response = await h.app.inject({ ...request, headers });
          expect(response.statusCode, `${who}: ${request.method} ${request.url}`).toBe(404);
          expect(typeof json(response).detail).toBe("string");
        }
      }
    }
  });

  it("lets a stranger reuse the owner's names without touching the owner's rows", async () => {
    const [, headers] = strangers[1];
    const mine = await h.app.inject({
      method: "POST",
      url: "/v2/auth/providers",
      headers,
      payload: { provider_id: "okta", name: "Mine", client_id: "c", auth_url: "https://a.test/", token_url: "https://a.test/t" },
    });
    expect(mine.statusCode).toBe(200);
    expect(json(mine).id).not.toBe(providerUuid);
  });

  it("leaves the owner's resources intact", async () => {
    const provider = json(await h.app.inject({ method: "GET", url: `/v2/auth/providers/${providerId}`, headers: owner }));
    expect(provider).toMatchObject({ id: providerUuid, name: "Okta", client_id: "owner-client" });
    const repos = await h.app.inject({ method: "GET", url: `/v1/integrations/github/${integrationId}/repos`, headers: owner });
    expect(repos.statusCode).toBe(200);
  });
});
