import type { RuleSource } from "./rules.ts";

/**
 * The platform's rate-limit table (mission spec, "Limits"), one entry per row, in the
 * table's order. Order carries no meaning: evaluation goes by tier (see evaluate.ts).
 *
 * Reading of the table's match column:
 * - a plain path such as "/repos" covers that path and everything below it, whole
 *   segments only ("/repos/a/b" yes, "/repository" no);
 * - "POST /runs (single run)" and "GET /runs/{uuid}" name one resource, so they are
 *   anchored with "exactly" (otherwise POST /runs/batch would also count as a single run);
 * - "containing" is a substring test and a leading "*" a suffix test, as written.
 */
export const DEFAULT_RULES: readonly RuleSource[] = [
  { name: "high-throughput-ip", category: "High throughput", identity: "ip", match: ["OPTIONS", "/info", "*/v1/metadata/submit"], limit: "2000/10" },
  { name: "auth-api-key", category: "High throughput", identity: "api-key", match: ["/auth"], limit: "2000/10" },
  { name: "auth-user", category: "High throughput", identity: "user", match: ["/auth"], limit: "2000/10" },
  { name: "beacon-ip", category: "High throughput", identity: "ip", match: ["/v1/beacon"], limit: "2000/10" },
  { name: "repos-api-key", category: "Repository", identity: "api-key", match: ["/repos"], limit: "100/60" },
  { name: "repos-user", category: "Repository", identity: "user", match: ["/repos"], limit: "100/60" },
  { name: "runs-batch-api-key", category: "High throughput", identity: "api-key", match: ["POST /runs/batch"], limit: "2000/10" },
  { name: "otel-traces-api-key", category: "Run ingest", identity: "api-key", match: ["POST /otel/v1/traces"], limit: "2000/10" },
  { name: "charts-api-key", category: "Charts", identity: "api-key", match: ["POST containing /charts"], limit: "750/600" },
  { name: "charts-user", category: "Charts", identity: "user", match: ["POST containing /charts"], limit: "750/600" },
  { name: "runs-multipart-api-key", category: "Multipart ingest", identity: "api-key", match: ["POST /runs/multipart"], limit: "6000/10" },
  { name: "runs-query-api-key", category: "Run query (API)", identity: "api-key", match: ["POST /runs/query"], limit: "15/10" },
  { name: "runs-query-user", category: "Run query (User)", identity: "user", match: ["POST /runs/query"], limit: "300/10" },
  { name: "generate-api-key", category: "Generation", identity: "api-key", match: ["/generate"], limit: "30/3600" },
  { name: "generate-user", category: "Generation", identity: "user", match: ["/generate"], limit: "30/3600" },
  { name: "commits-api-key", category: "Commits", identity: "api-key", match: ["/commits"], limit: { us: "10000/60", eu: "2000/60" } },
  { name: "commits-user", category: "Commits", identity: "user", match: ["/commits"], limit: { us: "10000/60", eu: "2000/60" } },
  { name: "deletion-api-key", category: "Deletion", identity: "api-key", match: ["DELETE /sessions", "DELETE */trigger"], limit: "10/60" },
  { name: "deletion-user", category: "Deletion", identity: "user", match: ["DELETE /sessions", "DELETE */trigger"], limit: "30/60" },
  { name: "run-create-api-key", category: "Run ingest", identity: "api-key", match: ["POST exactly /runs"], limit: "2000/10" },
  { name: "run-update-api-key", category: "Run ingest", identity: "api-key", match: ["PATCH containing /runs"], limit: "2000/10" },
  { name: "feedback-api-key", category: "High throughput", identity: "api-key", match: ["POST /feedback"], limit: "2000/10" },
  { name: "run-lookup-api-key", category: "Run lookup", identity: "api-key", match: ["GET exactly /runs/{uuid}"], limit: "30/60" },
  { name: "examples-api-key", category: "Examples", identity: "api-key", match: ["GET containing /examples"], limit: "5000/60" },
  { name: "default-api-key", category: "Default (API key)", identity: "api-key", tier: "default", limit: "1000/10" },
  { name: "default-user", category: "Default (User)", identity: "user", tier: "default", limit: "1000/10" },
  { name: "public-download-ip", category: "Public download", identity: "ip", match: ["/public/download"], limit: "5000/60" },
  { name: "runs-stats-api-key", category: "Stats", identity: "api-key", match: ["/runs/stats"], limit: { us: "1/10", eu: "20/10" } },
  { name: "catch-all-ip", category: "Public (catch-all)", identity: "ip", tier: "catch-all", limit: "100/60" },
];
