import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensurePythonEnv, PYTHON_TEST_PACKAGES } from "../../test/support/python-env.ts";
import { removeOnExit } from "../agent/processes.ts";
import { startDevServer, type Target } from "../agent/targets.ts";

/**
 * The vendor's Python dev server, pinned: `langgraph-cli[inmem]` with the LangGraph and
 * langchain-core versions the Slipway worker is tested with (test/support/python-env.ts).
 * pip resolves these together; the Slipway targets run the same interpreter, so both
 * servers run the graph on the same libraries.
 */
export const VENDOR_PYTHON_PACKAGES = ["langgraph-cli[inmem]==0.4.40", "langgraph-api==0.16.7", "langgraph-runtime-inmem==0.36.7", ...PYTHON_TEST_PACKAGES];

/** The Python twin of examples/agent (bench/python/fixture/agent.py). */
export const PYTHON_FIXTURE = "bench/python/fixture";

/** The bench's interpreter, made once and cached as ~/.cache/slipway/bench-python-<key>. */
export function benchPython(): string {
  return ensurePythonEnv("bench-python", VENDOR_PYTHON_PACKAGES);
}

/** Version of a package installed in `python`'s environment. */
export function installedVersion(python: string, dist: string): string {
  return execFileSync(python, ["-c", "import sys; from importlib.metadata import version; print(version(sys.argv[1]))", dist], { encoding: "utf8" }).trim();
}

/**
 * `langgraph dev` on a copy of the fixture (it writes `.langgraph_api/` beside
 * langgraph.json), in memory as the vendor's JS dev server in bench:agent is, with its
 * defaults otherwise (10 jobs per worker). Offline: no tracing, no analytics.
 */
export async function startVendorPython(repoRoot: string, python: string): Promise<Target> {
  const dir = removeOnExit(mkdtempSync(join(tmpdir(), "slipway-bench-vendor-py-")));
  cpSync(join(repoRoot, PYTHON_FIXTURE), dir, { recursive: true });
  const args = (port: number) => [
    "-m",
    "langgraph_cli",
    "dev",
    "--no-browser",
    "--no-reload",
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--config",
    join(dir, "langgraph.json"),
  ];
  const { url, pid, stop } = await startDevServer("vendor python", python, args, dir, { LANGGRAPH_CLI_NO_ANALYTICS: "1" });
  return { label: `vendor py (langgraph-api ${installedVersion(python, "langgraph-api")})`, url, cpuPid: pid, stop };
}

/** The pid of the Python worker our server `serverPid` started (a child running slipway_worker). */
export function workerPidOf(serverPid: number): number | undefined {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === serverPid && readFileSync(`/proc/${name}/cmdline`, "utf8").includes("slipway_worker")) return Number(name);
    } catch {
      // the process ended meanwhile
    }
  }
  return undefined;
}
