import { execFileSync } from "node:child_process";
import pg from "pg";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installPeer, PEER_CLI_VERSION, PEER_DIR } from "../../test/vendor/peer-install.ts";
import { atExit, freePort, removeOnExit, spawnServer, stopServer, waitHealthy } from "./processes.ts";

/** A server under test: where it listens and how to stop it. */
export interface Target {
  label: string;
  url: string;
  /** The server's process, for its peak memory (ours only). */
  pid?: number;
  /** The process whose CPU (its threads and child processes) the create+wait phase counts. */
  cpuPid?: number;
  stop(): Promise<void>;
}

// Servers log to files here; kept after the run so a failure can be read.
export const logDir = mkdtempSync(join(tmpdir(), "slipway-bench-"));

/**
 * Our agent server as users start it: the CLI, as a child process. With `restarted`,
 * it is started once, stopped and started again on the same storage, as a deployed
 * server runs after its first start: creating an embedded database (initdb, in
 * WebAssembly) leaves about 0.5 GB of memory behind that a restart does not have.
 */
export async function startOurs(
  repoRoot: string,
  label: string,
  storage: { databaseUrl?: string; schema?: string } = {},
  config = "examples/agent/langgraph.json",
  restarted = false,
): Promise<Target> {
  const dataDir = removeOnExit(mkdtempSync(join(tmpdir(), "slipway-bench-data-")));
  const start = async () => {
    const port = await freePort();
    const args = ["bin/slipway.js", "agent", "--config", config, "--host", "127.0.0.1", "--port", String(port), "--data-dir", dataDir, "--no-rate-limit"];
    if (storage.databaseUrl) args.push("--database-url", storage.databaseUrl, "--database-schema", storage.schema ?? "slipway_bench");
    const server = spawnServer(label, process.execPath, args, {
      cwd: repoRoot,
      env: { ...process.env, SLIPWAY_LOG_LEVEL: "warn", SLIPWAY_DATABASE_URL: "" },
      logPath: join(logDir, `${label.replace(/\W+/g, "-").replace(/^-|-$/g, "")}.log`),
    });
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitHealthy(server, url, 120_000);
    } catch (error) {
      await stopServer(server);
      throw error;
    }
    return { server, url };
  };
  try {
    if (restarted) await stopServer((await start()).server);
    const { server, url } = await start();
    const stop = async () => {
      await stopServer(server);
      rmSync(dataDir, { recursive: true, force: true });
    };
    return { label, url, pid: server.child.pid, cpuPid: server.child.pid, stop };
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The peer: `langgraphjs dev` of @langchain/langgraph-cli (which serves
 * @langchain/langgraph-api), installed on first use (test/vendor/peer-install.ts).
 * It runs a copy of examples/agent placed in bench/.peer so that the graph and the
 * peer share one @langchain/langgraph, and so the files the peer writes beside
 * langgraph.json stay out of the repository.
 */
export async function startPeer(repoRoot: string): Promise<Target> {
  const cli = installPeer();
  const peerDir = PEER_DIR;
  const graphDir = join(peerDir, "agent");
  rmSync(graphDir, { recursive: true, force: true });
  cpSync(join(repoRoot, "examples/agent"), graphDir, { recursive: true });

  const { url, pid, stop } = await startDevServer(
    "peer",
    cli,
    (port) => ["dev", "--port", String(port), "--host", "127.0.0.1", "--no-browser", "--no-reload", "--config", join(graphDir, "langgraph.json")],
    graphDir,
  );
  return { label: `peer (langgraph-api ${PEER_CLI_VERSION})`, url, cpuPid: pid, stop };
}

/**
 * A vendor's dev server on a free port of 127.0.0.1, offline (no tracing uploads, no key
 * to send anywhere), logging to `<name>.log`; resolves once it answers /ok.
 */
export async function startDevServer(
  name: string,
  command: string,
  args: (port: number) => string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ url: string; pid?: number; stop(): Promise<void> }> {
  const port = await freePort();
  const server = spawnServer(name, command, args(port), {
    cwd,
    env: { ...process.env, LANGSMITH_TRACING: "false", LANGCHAIN_TRACING_V2: "false", LANGSMITH_API_KEY: "", LANGCHAIN_API_KEY: "", ...env },
    logPath: join(logDir, `${name.replace(/\W+/g, "-")}.log`),
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = () => stopServer(server);
  try {
    await waitHealthy(server, url, 180_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, pid: server.child.pid, stop };
}

/**
 * A PostgreSQL server for the "ours on PostgreSQL" column: SLIPWAY_BENCH_DATABASE_URL
 * when set, else a throwaway one from scripts/test-services.sh with PostgreSQL's default
 * durability (fsync, synchronous_commit on), else none. (The test services'
 * SLIPWAY_TEST_DATABASE_URL is not used: it runs without fsync.) The table prints the
 * server's settings as it reports them.
 */
export function postgresForBench(
  repoRoot: string,
  schema: string,
): { databaseUrl: string; release(): Promise<void>; postmasterPid(): number | undefined } | undefined {
  const given = process.env.SLIPWAY_BENCH_DATABASE_URL;
  // A server we did not start outlives the bench: leave none of our tables in it (nor count its CPU).
  if (given) return { databaseUrl: given, release: () => dropSchema(given, schema), postmasterPid: () => undefined };
  const dir = mkdtempSync(join(tmpdir(), "slipway-bench-pg-"));
  const script = join(repoRoot, "scripts/test-services.sh");
  let stopped = false;
  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    try {
      execFileSync("bash", [script, "stop", dir], { stdio: "ignore" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  // Also on Ctrl-C or a crash: a PostgreSQL left running would hold its port.
  atExit(stopSync);
  const release = async () => stopSync();
  try {
    const output = execFileSync("bash", [script, "start", dir], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, SLIPWAY_PG_DURABLE: "1" },
    });
    const line = output.split("\n").find((l) => l.startsWith("SLIPWAY_TEST_DATABASE_URL="));
    if (!line) throw new Error("test-services.sh printed no database URL");
    // The postmaster's pid is the first line of postmaster.pid in its data directory.
    const postmasterPid = () => {
      try {
        return Number(readFileSync(join(dir, "pg", "postmaster.pid"), "utf8").split("\n")[0]) || undefined;
      } catch {
        return undefined;
      }
    };
    return { databaseUrl: line.slice(line.indexOf("=") + 1), release, postmasterPid };
  } catch (error) {
    void release();
    console.error(`no PostgreSQL for the bench: ${(error as Error).message.split("\n")[0]}`);
    return undefined;
  }
}

/** The server's durability settings, as `SHOW` reports them ("fsync=on, synchronous_commit=on"). */
export async function postgresDurability(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
    const settings: string[] = [];
    for (const name of ["fsync", "synchronous_commit"]) {
      const { rows } = await client.query<Record<string, string>>(`SHOW ${name}`);
      settings.push(`${name}=${rows[0]?.[name]}`);
    }
    return settings.join(", ");
  } catch (error) {
    return `unknown (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function dropSchema(databaseUrl: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } catch (error) {
    console.error(`could not drop bench schema ${schema}: ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
