import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnServer, stopServer, tail } from "../../bench/agent/processes.ts";
import { freePort } from "../support/ports.ts";
import { installPeer, PEER_DIR } from "./peer-install.ts";

const FIXTURES = fileURLToPath(new URL("../fixtures", import.meta.url));

export interface VendorServer {
  url: string;
  /** The server's log so far. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * The vendor's JS server (`langgraphjs dev`, in-memory) on a fixture project. The
 * fixture directories are copied into bench/.peer/fixtures: there the graphs import
 * the peer's own @langchain/langgraph (one copy for graph and server, as in a user's
 * project), and the files the dev server writes stay out of the repository.
 *
 * `fixtures` names every fixture directory the project reaches into ("../graph-kinds").
 */
export async function startVendorServer(project: string, fixtures: string[], env: Record<string, string> = {}): Promise<VendorServer> {
  const cli = installPeer();
  const root = join(PEER_DIR, "fixtures");
  mkdirSync(root, { recursive: true });
  for (const name of fixtures) {
    rmSync(join(root, name), { recursive: true, force: true });
    cpSync(join(FIXTURES, name), join(root, name), { recursive: true });
  }
  const cwd = join(root, project);
  const port = await freePort();
  const logPath = join(mkdtempSync(join(tmpdir(), "slipway-vendor-")), "vendor.log");
  const server = spawnServer(
    "vendor",
    cli,
    ["dev", "--port", String(port), "--host", "127.0.0.1", "--no-browser", "--no-reload", "--config", "langgraph.json"],
    {
      cwd,
      // Offline: no tracing uploads, no key for the server to send anywhere.
      env: { ...process.env, LANGSMITH_TRACING: "false", LANGCHAIN_TRACING_V2: "false", LANGSMITH_API_KEY: "", LANGCHAIN_API_KEY: "", ...env },
      logPath,
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const stop = () => stopServer(server);
  try {
    // /info: the one route its custom auth leaves open (/ok is behind it).
    await waitFor(`${url}/info`, () => server.child.exitCode !== null, 180_000);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${tail(logPath)}`);
  }
  return { url, output: () => tail(logPath, 100_000), stop };
}

async function waitFor(url: string, died: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (died()) throw new Error("the vendor's server exited before it was ready");
    const ok = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the vendor's server was not ready within ${timeoutMs} ms`);
}
