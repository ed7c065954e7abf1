// The server side of `npm run bench:ratelimit`, one process per measured mode:
// a Fastify app with one endpoint, the limiter off, in memory or on Redis.
// Reports its port over IPC, and its CPU time whenever the driver asks.
import Fastify from "fastify";
import { installErrorHandler } from "../src/http/error-handler.ts";
import { DEFAULT_RULES } from "../src/ratelimit/default-policy.ts";
import { registerRateLimit } from "../src/ratelimit/plugin.ts";
import { FailoverStore } from "../src/ratelimit/stores/failover.ts";
import { MemoryStore } from "../src/ratelimit/stores/memory.ts";
import { RedisStore } from "../src/ratelimit/stores/redis.ts";
import type { RateLimitStore } from "../src/ratelimit/stores/store.ts";

const mode = process.env.BENCH_MODE as "off" | "memory" | "redis";
const keys = new Set(Array.from({ length: Number(process.env.BENCH_KEYS ?? 1000) }, (_, i) => `bench-key-${i}`));

let store: RateLimitStore = new MemoryStore();
if (mode === "redis") {
  const redis = new RedisStore({ url: process.env.BENCH_REDIS_URL!, prefix: `bench:${process.pid}:` });
  await redis.ready();
  store = new FailoverStore(redis, { mode: "closed" });
}

const app = Fastify({ logger: false });
installErrorHandler(app, "fastapi");
registerRateLimit(app, {
  enabled: mode !== "off",
  region: "us",
  // The real table, with the API-key default raised so the measured requests are all
  // admitted: the cost of a refusal is not what is being measured.
  policy: DEFAULT_RULES.map((rule) => (rule.name === "default-api-key" ? { ...rule, limit: "1000000000/10" } : rule)),
  store,
  trustedProxies: [],
  resolveIdentity: (request) => {
    const key = request.headers["x-api-key"];
    return { apiKey: typeof key === "string" && keys.has(key) ? key : undefined };
  },
});
app.get("/v2/deployments", async () => ({ resources: [], offset: 0 }));
await app.listen({ port: 0, host: "127.0.0.1" });

process.on("message", async (message: { type: string }) => {
  if (message.type === "cpu") process.send!({ type: "cpu", usage: process.cpuUsage() });
  if (message.type === "stop") {
    await app.close();
    process.exit(0);
  }
});
process.send!({ type: "listening", port: (app.server.address() as { port: number }).port });
