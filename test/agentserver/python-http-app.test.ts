import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { checkProject } from "../../src/agentserver/check.ts";
import { readHttp } from "../../src/agentserver/graphs/http-config.ts";
import { startTestAgentServer, type TestAgentServer } from "../support/agent-server.ts";

const PROJECT = fileURLToPath(new URL("../fixtures/python-app/langgraph.json", import.meta.url));
const NO_APP = fileURLToPath(new URL("../fixtures/python-app/langgraph.no-app.json", import.meta.url));

/**
 * `http.app` naming a Python ASGI app (`./src/app.py:app`, as a Starlette or FastAPI app
 * is named on the vendor's server), in a project whose graph is JS: the Python worker
 * serves the app's routes, and what it answers 404 goes on to the built-in routes.
 * The fixture is a bare ASGI callable (what Starlette and FastAPI apps are underneath),
 * so the test environment needs no web framework. One server for the file.
 */
describe("a Python http.app (ASGI) beside a JS graph", () => {
  let agent: TestAgentServer;

  beforeAll(async () => {
    process.env.SLIPWAY_PYTHON = inject("pythonPath");
    agent = await startTestAgentServer("pglite", { configPath: PROJECT });
  });
  afterAll(async () => agent?.close());

  it("serves the app's routes after its lifespan started, with the query, headers and body it was sent", async () => {
    const hello = await fetch(`${agent.url}/hello?name=ada`);
    expect(hello.status).toBe(200);
    expect(await hello.json()).toEqual({ hello: "from python", lifespan: true, query: "name=ada" });
    const echo = await fetch(`${agent.url}/echo`, { method: "POST", headers: { "content-type": "application/json", "x-note": "hi" }, body: '{"a":1}' });
    expect(echo.status).toBe(201);
    expect(echo.headers.get("x-from")).toBe("python");
    expect(await echo.json()).toEqual({ body: { a: 1 }, "x-note": "hi" });
  });

  it("streams a body the app sends in pieces", async () => {
    const response = await fetch(`${agent.url}/stream`);
    expect(response.headers.get("content-type")).toBe("text/plain");
    expect(await response.text()).toBe("one,two,three");
  });

  it("leaves what it answers 404 to the built-in routes, and the JS graph runs", async () => {
    const client = new Client({ apiUrl: agent.url });
    const assistants = await client.assistants.search({ graphId: "echo" });
    expect(assistants.map((a) => a.graph_id)).toEqual(["echo"]);
    expect(await client.runs.wait(null, "echo", { input: { text: "hi" } })).toEqual({ text: "hi", reply: "js heard: hi" });
    expect((await fetch(`${agent.url}/nowhere`)).status).toBe(404);
  });

  it("answers 500 when the app raises, and serves the next request", async () => {
    const failed = await fetch(`${agent.url}/boom`);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ detail: "Internal server error" });
    expect((await fetch(`${agent.url}/hello`)).status).toBe(200);
  });
});

describe("a Python http.app at slipway agent --check", () => {
  // The TypeScript schema extraction is not what these check; the revision pipeline skips it too.
  beforeAll(() => void (process.env.SLIPWAY_CHECK_SCHEMAS = "0"));
  afterAll(() => void delete process.env.SLIPWAY_CHECK_SCHEMAS);

  it("loads it through the worker", async () => {
    process.env.SLIPWAY_PYTHON = inject("pythonPath");
    expect(await checkProject(PROJECT)).toEqual(["echo"]);
  });

  it("fails naming http.app when the module has no such attribute", async () => {
    process.env.SLIPWAY_PYTHON = inject("pythonPath");
    const failure = await checkProject(NO_APP).then(
      () => "loaded",
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/http\.app.*has no attribute "missing"/s);
  });

  it("refuses a Python module without the app's name, naming http.app", () => {
    expect(() => readHttp({ app: "./src/app.py" }, "/project")).toThrow('http.app: must name the app of the Python module: "./src/app.py:app"');
  });
});
