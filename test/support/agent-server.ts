import { afterEach, expect } from "vitest";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { startAgentServer, type RunningAgentServer } from "../../src/agentserver/server.ts";
import { freshBackend, type BackendName } from "./backends.ts";

export const FIXTURE_CONFIG = fileURLToPath(new URL("../fixtures/agents/langgraph.json", import.meta.url));

export interface TestAgentServer {
  server: RunningAgentServer;
  client: Client;
  url: string;
  close(): Promise<void>;
}

/** A real agent server on a free loopback port over the fixture graphs, on one back end. */
export async function startTestAgentServer(
  backend: BackendName,
  options: {
    configPath?: string;
    apiKey?: string;
    workers?: number;
    webhookAllowHosts?: string[];
    bodyLimit?: number;
    heartbeatMs?: number;
    shutdownGraceMs?: number;
    leaseSeconds?: number;
  } = {},
): Promise<TestAgentServer> {
  const target = freshBackend(backend, "agent");
  const server = await startAgentServer({
    configPath: options.configPath ?? FIXTURE_CONFIG,
    port: 0,
    host: "127.0.0.1",
    dataDir: target.dataDir,
    databaseUrl: target.databaseUrl,
    schema: target.schema,
    workers: options.workers ?? 10,
    apiKey: options.apiKey,
    webhookAllowHosts: options.webhookAllowHosts,
    bodyLimit: options.bodyLimit,
    heartbeatMs: options.heartbeatMs,
    shutdownGraceMs: options.shutdownGraceMs,
    leaseSeconds: options.leaseSeconds,
    logLevel: "error",
  });
  const client = new Client({ apiUrl: server.url, apiKey: options.apiKey });
  return { server, client, url: server.url, close: () => server.close() };
}

/**
 * One agent server per test, closed after it. Called at a test file's top level; each
 * test then `start`s its own, and `current` is the one of the test running.
 */
export function serverPerTest(): {
  start(backend: BackendName, options?: Parameters<typeof startTestAgentServer>[1]): Promise<TestAgentServer>;
  readonly current: TestAgentServer | undefined;
} {
  let running: TestAgentServer | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });
  return {
    async start(backend, options) {
      running = await startTestAgentServer(backend, options);
      return running;
    },
    get current() {
      return running;
    },
  };
}

/** Collects every part of an SDK stream. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const parts: T[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

/**
 * Every part of a stream, failing the test if it does not end within `ms`: the stream
 * is then aborted, so a stream that never ends fails the test instead of hanging it.
 */
export async function collectWithin<T>(open: (signal: AbortSignal) => AsyncIterable<T>, ms = 15_000): Promise<T[]> {
  const parts: T[] = [];
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  let outcome = "ended";
  try {
    for await (const part of open(abort.signal)) parts.push(part);
  } catch (error) {
    outcome = abort.signal.aborted ? `still streaming after ${ms} ms` : String(error);
  } finally {
    clearTimeout(timer);
  }
  expect(outcome).toBe("ended");
  return parts;
}
