import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentServer } from "../../src/agentserver/server.ts";
import { vendorDocument } from "../support/vendor-contract.ts";
import { compareDocuments, inScope, listOperations, type OpenApiDocument } from "./openapi-compare.ts";

/**
 * Wire compatibility, checked against the vendor's own description of its agent
 * server (shared/reference/ beside the repository, or its committed extract: see
 * test/support/vendor-contract.ts). A client written for the
 * vendor sends these method+path pairs and expects these statuses and fields.
 */
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const fixtureConfig = path.join(repoRoot, "test/fixtures/agents/langgraph.json");

/**
 * Differences we chose on purpose, each with its reason (the exact line the comparer
 * prints → why). Keep it short: every entry is a client that may break.
 */
const ACCEPTED_DEVIATIONS: Record<string, string> = {
  // The vendor's MCP endpoint has no sessions, so its DELETE only ever answers 404; ours
  // ends the session named by Mcp-Session-Id (204), as the transport describes, and
  // answers 404 for any other.
  "DELETE /mcp/: success status 204, vendor undefined": "MCP sessions exist here (decision 0042)",
};

describe("agent server OpenAPI contract", () => {
  let server: Awaited<ReturnType<typeof startAgentServer>> | undefined;
  let dataDir: string;
  let ours: OpenApiDocument;
  const vendor = (): OpenApiDocument => vendorDocument<OpenApiDocument>("agent-server");

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "slipway-openapi-"));
    server = await startAgentServer({ configPath: fixtureConfig, port: 0, host: "127.0.0.1", dataDir });
    const response = await fetch(`${server.url}/openapi.json`);
    expect(response.status).toBe(200);
    ours = (await response.json()) as OpenApiDocument;
  });

  afterAll(async () => {
    await server?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("serves every in-scope vendor operation with the same status and required fields", () => {
    const doc = vendor();
    // Guard against a vacuous pass if the reference file were emptied or moved.
    expect(listOperations(doc).filter((op) => inScope(op.path)).length).toBeGreaterThan(40);
    const mismatches = compareDocuments(doc, ours).filter((line) => !(line in ACCEPTED_DEVIATIONS));
    expect(mismatches, `${mismatches.length} difference(s) from the vendor's agent server:\n  ${mismatches.join("\n  ")}\n`).toEqual([]);
  });
});
