import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpServer } from "./server.ts";
import type { ValidationStyle } from "./error-handler.ts";

/** An app with a bodiless DELETE and a POST that needs a body, in each 422 style. */
async function app(style: ValidationStyle): Promise<FastifyInstance> {
  const server = await createHttpServer({ title: "json-body test", version: "0", validationStyle: style, logLevel: "silent" });
  server.delete("/things/:id", async (_request, reply) => reply.status(204).send());
  server.post("/things", { schema: { body: Type.Object({ name: Type.Optional(Type.String()) }) } }, async (request) => ({ got: request.body }));
  server.route({ method: ["POST", "PATCH"], url: "/echo", handler: async (request) => ({ got: request.body ?? "nothing" }) });
  await server.ready();
  return server;
}

const json = { "content-type": "application/json" };

describe.each(["fastapi", "message"] as const)("empty JSON bodies (%s errors)", (style) => {
  let server: FastifyInstance;
  beforeAll(async () => {
    server = await app(style);
  });
  afterAll(async () => {
    await server.close();
  });

  it("an empty body with Content-Type: application/json is no body, on every method", async () => {
    const deleted = await server.inject({ method: "DELETE", url: "/things/1", headers: json, payload: "" });
    expect(deleted.statusCode).toBe(204);
    const withLength = await server.inject({ method: "DELETE", url: "/things/1", headers: { ...json, "content-length": "0" } });
    expect(withLength.statusCode).toBe(204);
    const echoed = await server.inject({ method: "POST", url: "/echo", headers: json, payload: "" });
    expect(echoed.json()).toEqual({ got: "nothing" });
    const charset = await server.inject({ method: "PATCH", url: "/echo", headers: { "content-type": "application/json; charset=utf-8" }, payload: "" });
    expect(charset.json()).toEqual({ got: "nothing" });
  });

  it("a route that needs a body answers 422 naming the body as missing", async () => {
    const response = await server.inject({ method: "POST", url: "/things", headers: json, payload: "" });
    expect(response.statusCode).toBe(422);
    const expected = style === "fastapi" ? [{ loc: ["body"], msg: "Field required", type: "missing" }] : "body: Field required";
    expect(response.json().detail).toEqual(expected);
    // The same without a Content-Type at all.
    expect((await server.inject({ method: "POST", url: "/things" })).json().detail).toEqual(expected);
  });

  it("a body that is not empty is still parsed, and still refused when malformed", async () => {
    expect((await server.inject({ method: "POST", url: "/things", headers: json, payload: '{"name":"a"}' })).json()).toEqual({ got: { name: "a" } });
    expect((await server.inject({ method: "POST", url: "/things", headers: json, payload: "{nope" })).statusCode).toBe(422);
    expect((await server.inject({ method: "POST", url: "/things", headers: json, payload: " " })).statusCode).toBe(422);
    // Prototype poisoning is refused as before.
    expect((await server.inject({ method: "POST", url: "/echo", headers: json, payload: '{"__proto__":{"x":1}}' })).statusCode).toBe(422);
  });
});
