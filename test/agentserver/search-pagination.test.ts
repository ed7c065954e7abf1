import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";

/**
 * The search endpoints that carry the vendor's pagination headers (assistants, threads,
 * crons), with the vendor's values: while more follow, X-Pagination-Next is the next
 * offset and X-Pagination-Total one past it; on the last page the total counts to its
 * end. Both are exposed to browsers through CORS.
 */
describe("pagination headers of the search endpoints", () => {
  let t: TestAgentServer;
  beforeAll(async () => {
    t = await startTestAgentServer("pglite");
  }, 90_000);
  afterAll(async () => {
    await t?.close();
  });

  /** The headers of one search page, asked from a browser's origin. */
  async function page(path: string, body: Record<string, unknown>): Promise<{ count: number; total: string | null; next: string | null; exposed: string }> {
    const answer = await fetch(`${t.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: "https://ui.example" },
      body: JSON.stringify(body),
    });
    expect(answer.status).toBe(200);
    return {
      count: ((await answer.json()) as unknown[]).length,
      total: answer.headers.get("x-pagination-total"),
      next: answer.headers.get("x-pagination-next"),
      exposed: answer.headers.get("access-control-expose-headers") ?? "",
    };
  }

  /** Five matching items, pages of two: 2 (next 2, total 3), 2 (next 4, total 5), 1 (total 5). */
  async function expectVendorPages(path: string, filter: Record<string, unknown>): Promise<void> {
    expect(await page(path, { ...filter, limit: 2 })).toEqual({
      count: 2,
      next: "2",
      total: "3",
      exposed: expect.stringMatching(/X-Pagination-Total.*X-Pagination-Next/),
    });
    expect(await page(path, { ...filter, limit: 2, offset: 2 })).toMatchObject({ count: 2, next: "4", total: "5" });
    expect(await page(path, { ...filter, limit: 2, offset: 4 })).toMatchObject({ count: 1, next: null, total: "5" });
    expect(await page(path, { ...filter, limit: 5 })).toMatchObject({ count: 5, next: null, total: "5" });
    expect(await page(path, { ...filter, limit: 2, offset: 9 })).toMatchObject({ count: 0, next: null, total: "9" });
  }

  it("on POST /threads/search", async () => {
    const suite = randomUUID();
    for (let i = 0; i < 5; i++) await t.client.threads.create({ metadata: { suite } });
    await expectVendorPages("/threads/search", { metadata: { suite } });
    // The official SDK still reads the pages themselves.
    expect(await t.client.threads.search({ metadata: { suite }, limit: 2, offset: 4 })).toHaveLength(1);
  });

  it("on POST /assistants/search, whose next offset the official SDK reads", async () => {
    const suite = randomUUID();
    for (let i = 0; i < 5; i++) await t.client.assistants.create({ graphId: "agent", metadata: { suite } });
    await expectVendorPages("/assistants/search", { metadata: { suite } });
    expect((await t.client.assistants.search({ metadata: { suite }, limit: 2, includePagination: true })).next).toBe("2");
  });

  it("on POST /runs/crons/search", async () => {
    const suite = randomUUID();
    for (let i = 0; i < 5; i++) await t.client.crons.create("agent", { schedule: "0 3 * * *", metadata: { suite } });
    await expectVendorPages("/runs/crons/search", { metadata: { suite } });
  });
});
