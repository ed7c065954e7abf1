import { Client } from "@langchain/langgraph-sdk";
import { readFileSync, writeFileSync } from "node:fs";
import { it } from "vitest";
import { normalise, omitWithin } from "/work/wt-vendor/test/vendor/normalise.ts";
const ports = { vendor: readFileSync("/tmp/vendor-peer-port","utf8").trim(), ours: readFileSync("/tmp/vendor-ours-port","utf8").trim() };
const clean = (v: unknown) => omitWithin(omitWithin(v, "metadata", ["created_by", "owner", "langgraph_version", "langgraph_plan", "langgraph_host", "langgraph_api_url"]), "configurable", ["user-agent", "x-user-from-middleware", "user_id"]);
it("probe", async () => {
  for (const [name, port] of Object.entries(ports)) {
    const c = new Client({ apiUrl: `http://127.0.0.1:${port}`, defaultHeaders: { authorization: "Bearer token-alice" } });
    const t = await c.threads.create();
    const out = [];
    for await (const p of c.runs.stream(t.thread_id, "messages", { input: { messages: [{ role: "human", content: "hi you" }] }, streamMode: ["messages", "messages-tuple", "updates", "values", "debug", "custom"] })) out.push(p);
    const t2 = await c.threads.create();
    for await (const p of c.runs.stream(t2.thread_id, "parent", { input: { question: "why?" }, streamMode: ["updates", "debug", "values"], streamSubgraphs: true })) out.push(p);
    out.push(await c.threads.getState(t2.thread_id, undefined, { subgraphs: true }));
    out.push(await c.threads.getState(t2.thread_id));
    out.push(await c.threads.getHistory(t2.thread_id));
    writeFileSync(`/tmp/vendor-x/${name}.json`, JSON.stringify(clean(normalise(out)), null, 1));
  }
});
