// The server side of `npm run bench:ratelimit`, one process per measured mode, with
// the limiter off, in memory or on Redis, serving one of two endpoints:
// - "platform": the control plane as `slipway up` composes it (embedded PGlite, real
//   API keys, the auth hook, the limiter built from the same flags), GET /v2/deployments;
// - "bare": a Fastify app whose GET /v2/deployments does nothing, so the limiter's
//   cost is the largest share it can ever be (the worst case).
// Both use the built-in table as it ships. Reports its port and keys over IPC, and its
// CPU time whenever the driver asks.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { buildControlPlaneApp, resolveRateLimitIdentity } from "../src/controlplane/app.ts";
import { createAuthenticator } from "../src/controlplane/tenancy/authenticate.ts";
import { TenancyService } from "../src/controlplane/tenancy/service.ts";
import { installErrorHandler } from "../src/http/error-handler.ts";
import { registerRateLimit, type RateLimitOptions } from "../src/ratelimit/plugin.ts";
import { rateLimitOptionsFromFlags } from "../src/ratelimit/setup.ts";
import { openDatabase } from "../src/storage/open.ts";

const mode = process.env.BENCH_MODE as "off" | "memory" | "redis";
const endpoint = process.env.BENCH_ENDPOINT as "platform" | "bare";
const keyCount = Number(process.env.BENCH_KEYS ?? 1000);

async function limiter(resolveIdentity: RateLimitOptions["resolveIdentity"]): Promise<RateLimitOptions> {
  return rateLimitOptionsFromFlags(
    { enabled: mode !== "off", region: "us", redisUrl: mode === "redis" ? process.env.BENCH_REDIS_URL : undefined, redisFailure: "closed", trustedProxies: [] },
    { resolveIdentity },
  );
}

async function bare(): Promise<{ app: FastifyInstance; keys: string[]; close: () => Promise<void> }> {
  const keys = Array.from({ length: keyCount }, (_, i) => `bench-key-${i}`);
  const valid = new Set(keys);
  const app = Fastify({ logger: false });
  installErrorHandler(app, "fastapi");
  registerRateLimit(
    app,
    await limiter((request) => {
      const key = request.headers["x-api-key"];
      return { apiKey: typeof key === "string" && valid.has(key) ? key : undefined };
    }),
  );
  app.get("/v2/deployments", async () => ({ resources: [], offset: 0 }));
  return { app, keys, close: async () => {} };
}

async function platform(): Promise<{ app: FastifyInstance; keys: string[]; close: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "slipway-bench-ratelimit-"));
  const db = await openDatabase({ dataDir, schema: "slipway", component: "control" });
  const deps = { db, secretsKey: Buffer.alloc(32, 7), now: () => new Date(), newId: () => randomUUID(), publicUrl: "" };
  const tenancy = new TenancyService(deps);
  const created = (await tenancy.ensureDefaultTenant())!;
  // Workspace keys, which need no X-Tenant-Id (the bootstrap key is the organization's).
  const keys: string[] = [];
  while (keys.length < keyCount) keys.push((await tenancy.createApiKey(created.organization_id, created.workspace_id, "bench")).api_key);
  const authenticator = createAuthenticator({ db });
  const app = await buildControlPlaneApp({ deps, authenticator, rateLimit: await limiter((request) => resolveRateLimitIdentity(authenticator, request)) });
  return {
    app,
    keys,
    close: async () => {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const server = endpoint === "platform" ? await platform() : await bare();
await server.app.listen({ port: 0, host: "127.0.0.1" });

process.on("message", async (message: { type: string }) => {
  if (message.type === "cpu") process.send!({ type: "cpu", usage: process.cpuUsage() });
  if (message.type === "stop") {
    await server.app.close();
    await server.close();
    process.exit(0);
  }
});
process.send!({ type: "listening", port: (server.app.server.address() as { port: number }).port, keys: server.keys });
