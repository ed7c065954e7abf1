import { Readable } from "node:stream";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "./input-guard.ts";
import { createHttpServer } from "./server.ts";

const json = { "content-type": "application/json" };
const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`;

describe("the input guard", () => {
  let server: FastifyInstance;
  let handled = 0;
  beforeAll(async () => {
    server = await createHttpServer({ title: "guard test", version: "0", validationStyle: "fastapi", logLevel: "silent" });
    server.addContentTypeParser("application/octet-stream", (_request, payload, done) => done(null, payload));
    const record = async (request: { body: unknown }) => {
      handled++;
      return { ok: true, streamed: request.body instanceof Readable };
    };
    server.post("/items/:name", { schema: { body: Type.Object({}, { additionalProperties: true }) } }, record);
    server.get("/items", record);
    server.put("/upload", record);
    await server.ready();
  });
  afterAll(async () => {
    await server.close();
  });

  const post = (payload: string, url = "/items/a") => server.inject({ method: "POST", url, headers: json, payload });
  const detail = async (response: Awaited<ReturnType<typeof post>>) => {
    expect(response.statusCode).toBe(422);
    return response.json().detail[0];
  };

  it("refuses NUL in a string, a key, a query value and a path segment, naming the field", async () => {
    const before = handled;
    expect(await detail(await post('{"metadata":{"note":"a\\u0000b"}}'))).toMatchObject({
      loc: ["body", "metadata", "note"],
      msg: expect.stringMatching(/NUL/),
    });
    expect(await detail(await post('{"metadata":{"k\\u0000":1}}'))).toMatchObject({
      loc: ["body", "metadata", "k\u0000"],
      msg: expect.stringMatching(/^key .*NUL/),
    });
    expect(await detail(await post('{"list":["ok","\\u0000"]}'))).toMatchObject({ loc: ["body", "list", 1] });
    expect(await detail(await server.inject({ method: "GET", url: "/items?name_contains=%00" }))).toMatchObject({ loc: ["query", "name_contains"] });
    expect(await detail(await post("{}", "/items/a%00b"))).toMatchObject({ loc: ["path", "name"] });
    expect(handled).toBe(before);
  });

  it("refuses lone surrogates, and keeps paired ones", async () => {
    expect(await detail(await post('{"name":"\\ud800"}'))).toMatchObject({ loc: ["body", "name"], msg: expect.stringMatching(/surrogate/) });
    expect(await detail(await post('{"name":"x\\udfffy"}'))).toMatchObject({ loc: ["body", "name"] });
    expect(await detail(await post('{"\\udc00":1}'))).toMatchObject({ loc: ["body", "\udc00"] });
    expect((await post('{"name":"\\ud83d\\ude00 ok"}')).statusCode).toBe(200);
  });

  it(`accepts ${MAX_JSON_DEPTH} levels of nesting and refuses more, naming the top-level field`, async () => {
    expect((await post(`{"config":${nested(MAX_JSON_DEPTH - 1)}}`)).statusCode).toBe(200);
    expect(await detail(await post(`{"config":${nested(MAX_JSON_DEPTH)}}`))).toMatchObject({
      loc: ["body", "config"],
      msg: expect.stringMatching(/deeper than 100/),
    });
    const deep = await detail(await post(`{"input":${"[".repeat(10_000)}${"]".repeat(10_000)}}`));
    expect(deep.loc).toEqual(["body", "input"]);
  });

  it("refuses numbers JSON overflows to Infinity", async () => {
    expect(await detail(await post('{"after_seconds":1e400}'))).toMatchObject({ loc: ["body", "after_seconds"], msg: "must be a finite number" });
    expect((await post('{"after_seconds":1e300}')).statusCode).toBe(200);
  });

  it("leaves bodies that are not JSON alone", async () => {
    const response = await server.inject({
      method: "PUT",
      url: "/upload",
      headers: { "content-type": "application/octet-stream" },
      payload: Buffer.from([0, 0xed, 0xa0, 0x80]),
    });
    expect(response.json()).toEqual({ ok: true, streamed: true });
  });
});
