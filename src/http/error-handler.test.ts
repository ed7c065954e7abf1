import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_MESSAGE } from "./clip.ts";
import type { ValidationStyle } from "./error-handler.ts";
import { STATUS_OF, SlipwayError, invalidField, type ErrorCode } from "./errors.ts";
import { createHttpServer, type HttpApp } from "./server.ts";

const CODES = Object.keys(STATUS_OF) as ErrorCode[];
const SECRET = "password=hunter2 at /srv/slipway/secret.ts:42";

/** Routes that throw each kind of error the handler must map. */
async function app(style: ValidationStyle): Promise<HttpApp> {
  const server = await createHttpServer({ title: "error-handler test", version: "0", validationStyle: style, logLevel: "silent", bodyLimit: 1024 });
  server.get("/slipway/:code", { schema: { params: Type.Object({ code: Type.String() }) } }, async (request) => {
    throw new SlipwayError(request.params.code as ErrorCode, `refused as ${request.params.code}`);
  });
  server.get("/field", async () => {
    throw invalidField(["body", "source_config", "repo_url"], "must not be empty");
  });
  server.get("/limited", async () => {
    throw new SlipwayError("rate_limited", "slow down", { headers: { "retry-after": "7", "x-ratelimit-remaining": "0" } });
  });
  server.get("/echo-long", async () => {
    throw new SlipwayError("not_found", `Thread "${"x".repeat(50_000)}" not found`);
  });
  server.get("/crash", async () => {
    throw new Error(SECRET);
  });
  server.get("/crash-typed", async () => {
    throw Object.assign(new TypeError(SECRET), { code: "ECONNRESET" });
  });
  server.post(
    "/things/:id",
    {
      schema: {
        params: Type.Object({ id: Type.String({ format: "uuid" }) }),
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })) }),
        body: Type.Object({ name: Type.String(), mode: Type.Optional(Type.String({ enum: ["x", "y"] })) }, { additionalProperties: false }),
      },
    },
    async (request) => ({ got: request.body }),
  );
  await server.ready();
  return server;
}

const ID = "0f8fad5b-d9cb-469f-a165-70867728950e";
const json = { "content-type": "application/json" };

describe.each(["fastapi", "message"] as const)("the error handler (%s style)", (style) => {
  let server: HttpApp;
  beforeAll(async () => {
    server = await app(style);
  });
  afterAll(async () => {
    await server.close();
  });

  /** The expected 422 body: FastAPI's list, or `{"detail": "<field>: <why>"}`. */
  const detail422 = (problems: { loc: (string | number)[]; msg: string; type: string }[], message: string) => (style === "fastapi" ? problems : message);

  it("maps every SlipwayError code to its status, with the message as detail", async () => {
    for (const code of CODES) {
      const response = await server.inject({ method: "GET", url: `/slipway/${code}` });
      expect(response.statusCode, code).toBe(STATUS_OF[code]);
      const expected = code === "invalid" && style === "fastapi" ? [{ loc: ["body"], msg: "refused as invalid", type: "value_error" }] : "refused as invalid";
      expect(response.json(), code).toEqual({ detail: code === "invalid" ? expected : `refused as ${code}` });
    }
  });

  it("writes a field's 422 in the style's shape, naming the field", async () => {
    const response = await server.inject({ method: "GET", url: "/field" });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail).toEqual(
      detail422([{ loc: ["body", "source_config", "repo_url"], msg: "must not be empty", type: "value_error" }], "source_config.repo_url: must not be empty"),
    );
  });

  it("sends the headers a SlipwayError carries, and none on other errors", async () => {
    const limited = await server.inject({ method: "GET", url: "/limited" });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["retry-after"]).toBe("7");
    expect(limited.headers["x-ratelimit-remaining"]).toBe("0");
    expect(limited.json()).toEqual({ detail: "slow down" });
    const other = await server.inject({ method: "GET", url: "/slipway/conflict" });
    expect(other.headers["retry-after"]).toBeUndefined();
  });

  it("cuts what an error message echoes", async () => {
    const response = await server.inject({ method: "GET", url: "/echo-long" });
    expect(response.statusCode).toBe(404);
    const text: string = response.json().detail;
    expect(text.length).toBeLessThan(MAX_MESSAGE);
    expect(text).toMatch(/^Thread "x+…" not found$/);
  });

  it("answers a body that fails its schema with 422 at the field", async () => {
    const missing = await server.inject({ method: "POST", url: `/things/${ID}`, headers: json, payload: {} });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().detail).toEqual(detail422([{ loc: ["body", "name"], msg: "Field required", type: "missing" }], "name: Field required"));

    const extra = await server.inject({ method: "POST", url: `/things/${ID}`, headers: json, payload: { name: "a", colour: "red" } });
    expect(extra.statusCode).toBe(422);
    expect(extra.json().detail).toEqual(
      detail422([{ loc: ["body", "colour"], msg: "Extra inputs are not permitted", type: "extra_forbidden" }], "colour: Extra inputs are not permitted"),
    );

    const wrongType = await server.inject({ method: "POST", url: `/things/${ID}`, headers: json, payload: { name: 5 } });
    expect(wrongType.statusCode).toBe(422);
    expect(wrongType.json().detail).toEqual(detail422([{ loc: ["body", "name"], msg: "must be string", type: "type" }], "name: must be string"));

    const badEnum = await server.inject({ method: "POST", url: `/things/${ID}`, headers: json, payload: { name: "a", mode: "z" } });
    expect(badEnum.json().detail).toEqual(
      detail422([{ loc: ["body", "mode"], msg: "Input should be 'x', 'y'", type: "enum" }], "mode: Input should be 'x', 'y'"),
    );
  });

  it("answers a missing body as FastAPI's 'missing' at body", async () => {
    const response = await server.inject({ method: "POST", url: `/things/${ID}` });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail).toEqual(detail422([{ loc: ["body"], msg: "Field required", type: "missing" }], "body: Field required"));
  });

  it("answers a bad query value with 422 at query", async () => {
    const response = await server.inject({ method: "POST", url: `/things/${ID}?limit=11`, headers: json, payload: { name: "a" } });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail).toEqual(detail422([{ loc: ["query", "limit"], msg: "must be <= 10", type: "maximum" }], "limit: must be <= 10"));
    // Query strings are coerced: a number in text is fine.
    expect((await server.inject({ method: "POST", url: `/things/${ID}?limit=3`, headers: json, payload: { name: "a" } })).statusCode).toBe(200);
  });

  it("answers a bad path parameter with 422 at path", async () => {
    const response = await server.inject({ method: "POST", url: "/things/not-a-uuid", headers: json, payload: { name: "a" } });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail).toEqual(
      detail422([{ loc: ["path", "id"], msg: 'must match format "uuid"', type: "format" }], 'id: must match format "uuid"'),
    );
  });

  it("answers malformed JSON with 422 json_invalid at body", async () => {
    const response = await server.inject({ method: "POST", url: `/things/${ID}`, headers: json, payload: '{"name": ' });
    expect(response.statusCode).toBe(422);
    const detail = response.json().detail;
    if (style === "fastapi") {
      expect(detail).toHaveLength(1);
      expect(detail[0]).toMatchObject({ loc: ["body"], type: "json_invalid" });
      expect(detail[0].msg).toMatch(/^invalid JSON: /);
    } else {
      expect(detail).toMatch(/^invalid JSON: /);
    }
  });

  it("answers a body over the limit with 413", async () => {
    const response = await server.inject({ method: "POST", url: `/things/${ID}`, headers: json, payload: { name: "a".repeat(2048) } });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({ detail: expect.stringMatching(/body/i) });
  });

  it("answers other Fastify client errors with their status and a detail", async () => {
    const response = await server.inject({ method: "POST", url: `/things/${ID}`, headers: { "content-type": "application/x-unknown" }, payload: "x" });
    expect(response.statusCode).toBe(415);
    expect(Object.keys(response.json())).toEqual(["detail"]);
    expect(typeof response.json().detail).toBe("string");
  });

  it("answers an unknown route with 404 naming it, without its query", async () => {
    const response = await server.inject({ method: "GET", url: "/nowhere?token=abc" });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ detail: "Not Found: GET /nowhere" });
  });

  it("answers an unexpected error with a bare 500 that leaks neither message nor stack", async () => {
    for (const url of ["/crash", "/crash-typed"]) {
      const response = await server.inject({ method: "GET", url });
      expect(response.statusCode, url).toBe(500);
      expect(response.json(), url).toEqual({ detail: "Internal server error" });
      expect(response.body, url).not.toMatch(/hunter2|secret\.ts|ECONNRESET|TypeError|at /);
    }
  });
});
