import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { freshBackend } from "../support/backends.ts";

/**
 * What a route of the project's Hono `http.app` answers when it throws: a Hono
 * `HTTPException` answers with its own status and message (or its own response), as
 * Hono's default handler does on the vendor's server; any other error is a 500.
 */
const CONFIG = fileURLToPath(new URL("../fixtures/http-project/langgraph.client.json", import.meta.url));

describe("errors thrown in routes of http.app", () => {
  let server: RunningAgentServer;
  beforeAll(async () => {
    const target = freshBackend("pglite", "httpapperrors");
    server = await startAgentServer({ configPath: CONFIG, port: 0, host: "127.0.0.1", dataDir: target.dataDir, schema: target.schema, logLevel: "silent" });
  }, 90_000);
  afterAll(async () => {
    await server?.close();
  });

  it("answers an HTTPException with its status and message, the middleware's headers kept", async () => {
    const refused = await fetch(`${server.url}/greet`);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toBe("name is required");
    expect(refused.headers.get("x-client-app")).toBe("yes");
    expect(await (await fetch(`${server.url}/greet?name=ada`)).json()).toEqual({ hello: "ada" });
  });

  it("answers an HTTPException made with a response of its own with that response", async () => {
    const teapot = await fetch(`${server.url}/greet?name=teapot`);
    expect(teapot.status).toBe(418);
    expect(await teapot.json()).toEqual({ detail: "short and stout" });
  });

  it("answers any other error with a 500 that tells nothing of it", async () => {
    const failed = await fetch(`${server.url}/greet?name=boom`);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ detail: "Internal server error" });
  });
});
