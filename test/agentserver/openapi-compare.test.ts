import { describe, expect, it } from "vitest";
import { compareDocuments, type OpenApiDocument } from "./openapi-compare.ts";

/** The comparer itself, on small documents, so a green contract test means something. */
const vendor: OpenApiDocument = {
  paths: {
    "/threads": { post: { responses: { "200": json({ $ref: "#/components/schemas/Thread" }), "422": {} } } },
    "/threads/{thread_id}/history": { get: { responses: { "200": json({ type: "array", items: { $ref: "#/components/schemas/State" } }) } } },
    "/runs/cancel": { post: { responses: { "204": { description: "ok" } } } },
    "/threads/{thread_id}/commands": { post: { responses: { "200": json({}) } } },
    "/either": { get: { responses: { "200": json({ anyOf: [{ $ref: "#/components/schemas/Thread" }, { type: "null" }] }) } } },
  },
  components: {
    schemas: {
      Thread: { type: "object", required: ["thread_id", "status"], properties: { thread_id: {}, status: {} } },
      State: { allOf: [{ required: ["values"] }, { required: ["next"] }] },
    },
  },
};

function json(schema: unknown) {
  return { description: "ok", content: { "application/json": { schema } } };
}

describe("compareDocuments", () => {
  it("accepts a matching document, whatever its $ref layout", () => {
    const ours: OpenApiDocument = {
      paths: {
        "/threads": { post: { responses: { "200": json({ type: "object", properties: { thread_id: {}, status: {}, extra: {} } }) } } },
        "/threads/{thread_id}/history": { get: { responses: { "200": json({ type: "array", items: { $ref: "#/components/schemas/S" } }) } } },
        "/runs/cancel": { post: { responses: { "204": { description: "ok" } } } },
        "/either": { get: { responses: { "200": json({ allOf: [{ properties: { thread_id: {} } }, { properties: { status: {} } }] }) } } },
      },
      components: { schemas: { S: { type: "object", properties: { values: {}, next: {} } } } },
    };
    expect(compareDocuments(vendor, ours)).toEqual([]);
  });

  it("names each difference", () => {
    const ours: OpenApiDocument = {
      paths: {
        "/threads": { post: { responses: { "201": json({ type: "object", properties: { thread_id: {} } }) } } },
        "/threads/{id}/history": { get: { responses: { "200": json({ type: "array", items: { properties: { values: {} } } }) } } },
        "/either": { get: { responses: { "200": json({ anyOf: [{ properties: { thread_id: {}, status: {} } }, { properties: { thread_id: {} } }] }) } } },
      },
    };
    expect(compareDocuments(vendor, ours)).toEqual([
      "POST /threads: success status 201, vendor 200",
      "GET /threads/{thread_id}/history: path parameters named differently (ours /threads/{id}/history)",
      "GET /threads/{thread_id}/history 200 body items: missing required next",
      "POST /runs/cancel: not served",
      "GET /either 200 body: missing required status",
    ]);
  });
});
