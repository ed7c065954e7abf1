import { describe, expect, it } from "vitest";
import { compilePolicy } from "./compile.ts";
import { DEFAULT_RULES } from "./default-policy.ts";
import { applicableRules, type RequestFacts } from "./evaluate.ts";
import { memoryLimiter, send } from "./fixtures/limiter.ts";
import { REGIONS, type Region } from "./rules.ts";

const IP = "203.0.113.7";
const KEY = { apiKey: "lsv2_valid_key" };
const USER = { userId: "user-42" };
const RUN_ID = "0f8fad5b-d9cb-469f-a165-70867728950e";

interface Row {
  rule: string;
  category: string;
  /** A request that this row, and only this row, governs. */
  request: Omit<RequestFacts, "ip">;
  limit: Record<Region, [count: number, seconds: number]>;
}

const same = (count: number, seconds: number): Record<Region, [number, number]> => ({ us: [count, seconds], eu: [count, seconds] });

// One entry per row of the mission spec's table, in its order.
const ROWS: Row[] = [
  { rule: "high-throughput-ip", category: "High throughput", request: { method: "OPTIONS", url: "/v2/deployments" }, limit: same(2000, 10) },
  { rule: "auth-api-key", category: "High throughput", request: { method: "POST", url: "/api/v1/auth/verify", ...KEY }, limit: same(2000, 10) },
  { rule: "auth-user", category: "High throughput", request: { method: "GET", url: "/auth", ...USER }, limit: same(2000, 10) },
  { rule: "beacon-ip", category: "High throughput", request: { method: "POST", url: "/v1/beacon/ingest" }, limit: same(2000, 10) },
  { rule: "repos-api-key", category: "Repository", request: { method: "GET", url: "/api/v1/repos/acme/prompt", ...KEY }, limit: same(100, 60) },
  { rule: "repos-user", category: "Repository", request: { method: "GET", url: "/repos", ...USER }, limit: same(100, 60) },
  { rule: "runs-batch-api-key", category: "High throughput", request: { method: "POST", url: "/runs/batch", ...KEY }, limit: same(2000, 10) },
  { rule: "otel-traces-api-key", category: "Run ingest", request: { method: "POST", url: "/api/v1/otel/v1/traces", ...KEY }, limit: same(2000, 10) },
  { rule: "charts-api-key", category: "Charts", request: { method: "POST", url: "/api/v1/sessions/abc/charts", ...KEY }, limit: same(750, 600) },
  { rule: "charts-user", category: "Charts", request: { method: "POST", url: "/charts/section", ...USER }, limit: same(750, 600) },
  { rule: "runs-multipart-api-key", category: "Multipart ingest", request: { method: "POST", url: "/runs/multipart", ...KEY }, limit: same(6000, 10) },
  { rule: "runs-query-api-key", category: "Run query (API)", request: { method: "POST", url: "/api/v1/runs/query", ...KEY }, limit: same(15, 10) },
  { rule: "runs-query-user", category: "Run query (User)", request: { method: "POST", url: "/runs/query", ...USER }, limit: same(300, 10) },
  { rule: "generate-api-key", category: "Generation", request: { method: "POST", url: "/generate/prompt", ...KEY }, limit: same(30, 3600) },
  { rule: "generate-user", category: "Generation", request: { method: "POST", url: "/generate", ...USER }, limit: same(30, 3600) },
  { rule: "commits-api-key", category: "Commits", request: { method: "GET", url: "/commits/acme/prompt", ...KEY }, limit: { us: [10000, 60], eu: [2000, 60] } },
  {
    rule: "commits-user",
    category: "Commits",
    request: { method: "POST", url: "/api/v1/commits/acme/prompt", ...USER },
    limit: { us: [10000, 60], eu: [2000, 60] },
  },
  { rule: "deletion-api-key", category: "Deletion", request: { method: "DELETE", url: "/sessions/abc", ...KEY }, limit: same(10, 60) },
  { rule: "deletion-user", category: "Deletion", request: { method: "DELETE", url: "/api/v1/automations/abc/trigger", ...USER }, limit: same(30, 60) },
  { rule: "run-create-api-key", category: "Run ingest", request: { method: "POST", url: "/runs", ...KEY }, limit: same(2000, 10) },
  { rule: "run-update-api-key", category: "Run ingest", request: { method: "PATCH", url: `/api/v1/runs/${RUN_ID}`, ...KEY }, limit: same(2000, 10) },
  { rule: "feedback-api-key", category: "High throughput", request: { method: "POST", url: "/feedback", ...KEY }, limit: same(2000, 10) },
  { rule: "run-lookup-api-key", category: "Run lookup", request: { method: "GET", url: `/api/v1/runs/${RUN_ID}?select=id`, ...KEY }, limit: same(30, 60) },
  { rule: "examples-api-key", category: "Examples", request: { method: "GET", url: "/datasets/abc/examples", ...KEY }, limit: same(5000, 60) },
  { rule: "default-api-key", category: "Default (API key)", request: { method: "GET", url: "/v2/deployments", ...KEY }, limit: same(1000, 10) },
  { rule: "default-user", category: "Default (User)", request: { method: "GET", url: "/v2/deployments", ...USER }, limit: same(1000, 10) },
  { rule: "public-download-ip", category: "Public download", request: { method: "GET", url: "/public/download/abc" }, limit: same(5000, 60) },
  { rule: "runs-stats-api-key", category: "Stats", request: { method: "POST", url: "/runs/stats", ...KEY }, limit: { us: [1, 10], eu: [20, 10] } },
  { rule: "catch-all-ip", category: "Public (catch-all)", request: { method: "GET", url: "/v2/deployments" }, limit: same(100, 60) },
];

describe("the built-in table", () => {
  it("has one rule per row of the spec's table, and every row is tested here", () => {
    expect(DEFAULT_RULES.map((rule) => rule.name)).toEqual(ROWS.map((row) => row.rule));
  });

  describe.each(REGIONS)("in region %s", (region) => {
    it.each(ROWS)("$rule: the row alone governs its sample request", ({ rule, request }) => {
      const applied = applicableRules(compilePolicy(DEFAULT_RULES, region), { ...request, ip: IP });
      expect(applied.map((a) => a.rule.name)).toEqual([rule]);
    });

    it.each(ROWS)("$rule: admits exactly its limit per window, then 429 naming $category", ({ rule, category, request, limit }) => {
      const [count, seconds] = limit[region];
      const { clock, check } = memoryLimiter(region);
      const facts = { ...request, ip: IP };
      expect(send(check, facts, count).allowed).toBe(count);

      const refused = check(facts);
      expect(refused.outcome).toBe("rejected");
      if (refused.outcome !== "rejected") return;
      expect(refused.report.rule.name).toBe(rule);
      expect(refused.report.rule.category).toBe(category);
      expect(refused.report.rule.windowSeconds).toBe(seconds);
      expect(refused.report.resetSeconds).toBe(seconds);

      clock.advance(seconds * 1000);
      expect(check(facts).outcome).toBe("allowed");
    });
  });
});

describe("tiers", () => {
  const policy = compilePolicy(DEFAULT_RULES, "us");
  const names = (facts: RequestFacts) => applicableRules(policy, facts).map((a) => a.rule.name);

  it("a request without identity falls to the IP catch-all", () => {
    expect(names({ method: "POST", url: "/runs/query", ip: IP })).toEqual(["catch-all-ip"]);
  });

  it("an API-key row does not apply to a user, who gets the user default instead", () => {
    expect(names({ method: "POST", url: "/runs/batch", ip: IP, ...USER })).toEqual(["default-user"]);
  });

  it("an IP row applies to authenticated callers too, replacing their default", () => {
    expect(names({ method: "GET", url: "/info", ip: IP, ...KEY })).toEqual(["high-throughput-ip"]);
  });

  it("every matching specific row applies at once", () => {
    expect(names({ method: "OPTIONS", url: "/runs/stats", ip: IP, ...KEY }).sort()).toEqual(["high-throughput-ip", "runs-stats-api-key"]);
  });

  it("a caller with both a key and a user id gets the API-key default", () => {
    expect(names({ method: "GET", url: "/v2/deployments", ip: IP, ...KEY, ...USER })).toEqual(["default-api-key"]);
  });

  it("counts user rules per user and IP, API-key rules per key, IP rules per IP", () => {
    const { check } = memoryLimiter("us");
    const user = { method: "POST", url: "/runs/query", ...USER };
    expect(send(check, { ...user, ip: IP }, 301).allowed).toBe(300);
    expect(check({ ...user, ip: "198.51.100.1" }).outcome).toBe("allowed");
    expect(check({ ...user, userId: "user-43", ip: IP }).outcome).toBe("allowed");

    const keyed = { method: "POST", url: "/runs/query", ...KEY };
    expect(send(check, { ...keyed, ip: IP }, 15).allowed).toBe(15);
    expect(check({ ...keyed, ip: "198.51.100.1" }).outcome).toBe("rejected");

    const anonymous = { method: "GET", url: "/", ip: IP };
    expect(send(check, anonymous, 101).allowed).toBe(100);
    expect(check({ ...anonymous, ip: "198.51.100.1" }).outcome).toBe("allowed");
  });

  it("counts IPv6 callers by their /64", () => {
    const { check } = memoryLimiter("us");
    for (let i = 1; i <= 100; i++) expect(check({ method: "GET", url: "/", ip: `2001:db8:1:2::${i.toString(16)}` }).outcome).toBe("allowed");
    expect(check({ method: "GET", url: "/", ip: "2001:db8:1:2:ffff::1" }).outcome).toBe("rejected");
    expect(check({ method: "GET", url: "/", ip: "2001:db8:1:3::1" }).outcome).toBe("allowed");
  });
});

describe("windows and boundaries", () => {
  const query = { method: "POST", url: "/runs/query", ip: IP, ...KEY };

  it("refuses until the window's end, with Retry-After rounded up, and admits at the end", () => {
    const { clock, check } = memoryLimiter("us");
    const start = clock.now;
    expect(send(check, query, 15).allowed).toBe(15);

    clock.now = start + 3_001;
    const early = check(query);
    expect(early).toMatchObject({ outcome: "rejected", report: { remaining: 0, resetSeconds: 7 } });

    clock.now = start + 9_999;
    expect(check(query)).toMatchObject({ outcome: "rejected", report: { resetSeconds: 1 } });

    clock.now = start + 10_000;
    expect(check(query)).toMatchObject({ outcome: "allowed", report: { remaining: 14, resetSeconds: 10 } });
  });

  it("a refused request uses no quota of the rules it did fit", () => {
    const { check } = memoryLimiter("us");
    const both = { method: "OPTIONS", url: "/runs/stats", ip: IP, ...KEY };
    // Allowed: the tightest rule is reported (stats, 1 per 10 s in the US).
    expect(check(both)).toMatchObject({ outcome: "allowed", report: { rule: { name: "runs-stats-api-key" }, remaining: 0 } });
    for (let i = 0; i < 5; i++) expect(check(both)).toMatchObject({ outcome: "rejected", report: { rule: { name: "runs-stats-api-key" } } });
    // The IP rule counted only the one admitted request, plus this one.
    expect(check({ method: "GET", url: "/info", ip: IP })).toMatchObject({ outcome: "allowed", report: { remaining: 1998 } });
  });

  it("reports the refusing rule the client must wait longest for", () => {
    const { clock, check } = memoryLimiter("us", [
      { name: "short", category: "Short", identity: "ip", match: ["/x"], limit: "1/10" },
      { name: "long", category: "Long", identity: "ip", match: ["/x"], limit: "1/60" },
    ]);
    const facts = { method: "GET", url: "/x", ip: IP };
    expect(check(facts).outcome).toBe("allowed");
    expect(check(facts)).toMatchObject({ outcome: "rejected", report: { rule: { name: "long" }, resetSeconds: 60 } });
    clock.advance(10_000);
    expect(check(facts)).toMatchObject({ outcome: "rejected", report: { rule: { name: "long" }, resetSeconds: 50 } });
  });
});

describe("region switch", () => {
  const cases = [
    { url: "/commits/acme/p", us: 10000, eu: 2000 },
    { url: "/runs/stats", us: 1, eu: 20 },
  ];
  it.each(cases)("$url admits $us in the US and $eu in the EU", ({ url, us, eu }) => {
    for (const [region, expected] of [
      ["us", us],
      ["eu", eu],
    ] as const) {
      const { check } = memoryLimiter(region);
      expect(send(check, { method: "GET", url, ip: IP, ...KEY }, expected + 1).allowed).toBe(expected);
    }
  });
});
