import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { testRedisUrl } from "../../test/support/backends.ts";
import { RedisStore } from "./stores/redis.ts";

const HAMMER = fileURLToPath(new URL("./fixtures/hammer.ts", import.meta.url));
const PROCESSES = 4;
const ATTEMPTS = 400;
const LIMIT = 777;

/** Resolves with the first line of the child's output that satisfies `test`. */
function lineFrom(child: ChildProcess, test: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      for (const line of buffer.split("\n").slice(0, -1)) if (test(line)) resolve(line);
      buffer = buffer.slice(buffer.lastIndexOf("\n") + 1);
    });
    child.once("exit", (code) => reject(new Error(`hammer exited with ${code} before answering`)));
  });
}

describe("several processes on one Redis", () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill();
  });

  it("admit exactly the limit between them, and refused requests use no quota", async () => {
    const prefix = `test:${randomBytes(4).toString("hex")}:`;
    const env = { ...process.env, REDIS_URL: testRedisUrl(), PREFIX: prefix, LIMIT: String(LIMIT), ATTEMPTS: String(ATTEMPTS) };
    for (let i = 0; i < PROCESSES; i++) {
      const child = spawn(process.execPath, ["--import", "tsx", HAMMER], { env, stdio: ["pipe", "pipe", "inherit"] });
      children.push(child);
    }
    // Start them together so their requests interleave on the server.
    await Promise.all(children.map((child) => lineFrom(child, (line) => line === "ready")));
    const results = children.map((child) => lineFrom(child, (line) => line.startsWith("{")));
    for (const child of children) child.stdin!.write("go\n");
    const accepted = (await Promise.all(results)).map((line) => (JSON.parse(line) as { accepted: number }).accepted);
    await Promise.all(children.map((child) => (child.exitCode === null ? once(child, "exit") : undefined)));

    expect(PROCESSES * ATTEMPTS).toBeGreaterThan(LIMIT);
    expect(accepted.reduce((sum, n) => sum + n, 0)).toBe(LIMIT);
    // Every process got some: they really competed.
    expect(accepted.every((n) => n > 0)).toBe(true);

    const store = new RedisStore({ url: testRedisUrl(), prefix });
    try {
      await store.ready();
      expect(await store.redis.hget(store.redisKey("tight\u0000k:shared-key"), "c")).toBe(String(LIMIT));
      expect(await store.redis.hget(store.redisKey("wide\u0000i:192.0.2.1"), "c")).toBe(String(LIMIT));
    } finally {
      await store.close();
    }
  });
});
