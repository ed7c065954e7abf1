import { connect, type AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildControlPlaneApp, resolveRateLimitIdentity } from "../../src/controlplane/app.ts";
import { routeModules } from "../../src/controlplane/routes.ts";
import { MemoryStore, type RuleSource } from "../../src/ratelimit/index.ts";
import { BACKENDS } from "../support/backends.ts";
import { openHarness, type Harness } from "../controlplane/tenancy-harness.ts";

/**
 * Issue 31, item 6: `GET /api-host/v2/deployments` was served after the rule on
 * `GET /v2/deployments` had refused the same key, and behind a trusted proxy
 * `X-Forwarded-For: ::FFFF:a.b.c.d` had a counter of its own. Whatever the spelling of
 * a path the router serves, or of a client's address, it is one bucket.
 */
const POLICY: RuleSource[] = [
  { name: "deployments-list", category: "Deployments", identity: "api-key", match: ["GET /v2/deployments"], limit: "2/60" },
  { name: "health-ip", category: "Health", identity: "ip", match: ["GET /ok"], limit: "2/60" },
];

/** Request targets for GET /v2/deployments, as a client may write them on the wire. */
const PATH_SPELLINGS = [
  "/api-host/v2/deployments",
  "/v2/deployments/",
  "//v2/deployments",
  "/v2//deployments",
  "/V2/deployments",
  "/v2/DEPLOYMENTS",
  "/API-HOST/v2/deployments",
  "/v2/%64eployments",
  "/%76%32/deployments",
  "/%61pi-host/v2/deployments",
  "/api-host/v2/%64eployments",
  "/api-host//v2/deployments",
  "/api-host/v2/deployments/",
  "//api-host/v2/deployments",
  "/v2/deployments%2F",
  "/v2/deployments?limit=1",
  "/api-host/v2/deployments?limit=1",
  "/v2/deployments#part",
  "http://elsewhere.example/v2/deployments",
  "https://elsewhere.example/api-host/v2/deployments",
  "/v2/deployments",
];

/** X-Forwarded-For spellings of the IPv4 client 203.0.113.n. */
function v4Spellings(n: number): string[] {
  const octets = [203, 0, 113, n];
  const dotted = octets.join(".");
  const hex = (a: number, b: number) => ((a << 8) | b).toString(16).padStart(4, "0");
  return [
    dotted,
    `::FFFF:${dotted}`,
    `::ffff:${hex(203, 0)}:${hex(113, n)}`,
    `0:0:0:0:0:ffff:${dotted}`,
    `0000:0000:0000:0000:0000:FFFF:${hex(203, 0).toUpperCase()}:${hex(113, n).toUpperCase()}`,
    `[::ffff:${dotted}]`,
    `[::ffff:${dotted}]:443`,
    `${dotted}:51234`,
    octets.map((octet) => String(octet).padStart(3, "0")).join("."),
  ];
}

/** X-Forwarded-For spellings of the IPv6 client 2001:db8:1:n::7. */
function v6Spellings(n: number): string[] {
  const group = n.toString(16);
  return [
    `2001:db8:1:${group}::7`,
    `2001:DB8:1:${group.toUpperCase()}::7`,
    `2001:0db8:0001:${group.padStart(4, "0")}:0000:0000:0000:0007`,
    `[2001:db8:1:${group}::7]`,
    `[2001:db8:1:${group}::7]:8080`,
    `2001:db8:1:${group}:0:0:0:7%eth0`,
  ];
}

describe.each(BACKENDS)("one bucket per client and path, whatever the spelling, on %s", (backend) => {
  let harness: Harness;
  let app: FastifyInstance;
  let port: number;
  let organizationId: string;
  let workspaceId: string;

  beforeAll(async () => {
    harness = await openHarness(backend);
    app = await buildControlPlaneApp({
      deps: harness.deps,
      authenticator: harness.authenticator,
      modules: routeModules,
      logLevel: "error",
      rateLimit: {
        enabled: true,
        region: "us",
        policy: POLICY,
        store: new MemoryStore(),
        trustedProxies: ["loopback"],
        resolveIdentity: (request) => resolveRateLimitIdentity(harness.authenticator, request),
      },
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    port = (app.server.address() as AddressInfo).port;
    const owner = await harness.tenancy.bootstrap({ keyScope: "workspace" });
    organizationId = owner.organization_id;
    workspaceId = owner.workspace_id;
  });
  afterAll(async () => {
    await app?.close();
    await harness?.close();
  });

  /** Sends a request line as written (fetch would rewrite some of these targets) and answers its status. */
  function rawGet(target: string, headers: Record<string, string>): Promise<number> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => {
        const lines = [`GET ${target} HTTP/1.1`, "Host: 127.0.0.1", "Connection: close", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
        socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      });
      let head = "";
      socket.setEncoding("latin1");
      socket.on("data", (chunk: string) => (head += chunk));
      socket.once("end", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0)));
      socket.once("error", reject);
    });
  }

  const freshKey = async () => ({ "x-api-key": (await harness.tenancy.createApiKey(organizationId, workspaceId, "spellings")).api_key });

  it("refuses GET /api-host/v2/deployments once the rule on GET /v2/deployments refused the key", async () => {
    const key = await freshKey();
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await rawGet("/v2/deployments", key));
    expect(statuses).toEqual([200, 200, 429]);
    expect(await rawGet("/api-host/v2/deployments", key)).toBe(429);
  });

  it("serves a key at most the rule's limit across every spelling of the path, and refuses the rest (429) or serves them nothing (404, 422)", async () => {
    const overServed: string[] = [];
    const other: string[] = [];
    const opened = new Set<string>();
    // Each spelling first with a fresh key, so that every one of them gets a chance at the quota.
    for (const first of PATH_SPELLINGS) {
      const key = await freshKey();
      const served: string[] = [];
      for (const target of [first, ...PATH_SPELLINGS, first]) {
        const status = await rawGet(target, key);
        if (status === 200) served.push(target);
        else if (status !== 429 && status !== 404 && status !== 422) other.push(`${target}: ${status}`);
      }
      if (served.length > 2) overServed.push(`${first} first: served ${served.join(", ")}`);
      if (served[0] === first) opened.add(first);
    }
    expect(other).toEqual([]);
    expect(overServed).toEqual([]);
    // The spellings the router serves are served (and then counted with the rest).
    for (const target of [
      "/v2/deployments",
      "/api-host/v2/deployments",
      "/v2/%64eployments",
      "/%61pi-host/v2/deployments",
      "http://elsewhere.example/v2/deployments",
      "/v2/deployments?limit=1",
    ]) {
      expect(opened).toContain(target);
    }
  });

  it.each([
    ["IPv4", v4Spellings, 0],
    ["IPv6", v6Spellings, 100],
  ] as const)("counts one %s client behind a trusted proxy once, whatever the X-Forwarded-For spelling", async (_family, spellingsOf, base) => {
    const count = spellingsOf(0).length;
    for (let round = 0; round < count; round++) {
      // A client of its own per round, whose round starts with a different spelling.
      const spellings = spellingsOf(base + round + 1);
      const order = [...spellings.slice(round), ...spellings.slice(0, round)];
      const statuses: string[] = [];
      for (const spelling of [...order, order[0]!]) statuses.push(`${spelling}: ${await rawGet("/ok", { "x-forwarded-for": spelling })}`);
      expect(statuses.filter((line) => line.endsWith(": 200")).length, statuses.join("\n")).toBe(2);
      expect(
        statuses.filter((line) => !line.endsWith(": 200") && !line.endsWith(": 429")),
        statuses.join("\n"),
      ).toEqual([]);
    }
  });
});
