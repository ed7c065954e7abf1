import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { warmPackageCache } from "./package-cache.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A real `slipway up` child process, as a user starts it. */
export interface ControlPlaneProcess {
  child: ChildProcess;
  url: string;
  /** Printed once, on the first start over an empty database. */
  apiKey?: string;
  workspaceId?: string;
  output(): string;
  /** Sends `signal` and resolves once the process is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `slipway up --json` with `args` and extra environment; resolves once it listens.
 * Without --port, it listens on a free port; `cwd` is the project's root unless given.
 */
export async function startControlPlane(args: string[], env: Record<string, string | undefined> = {}, cwd = ROOT): Promise<ControlPlaneProcess> {
  if (env.SLIPWAY_PACKAGE_CACHE) await warmPackageCache(env.SLIPWAY_PACKAGE_CACHE);
  const port = args.includes("--port") ? [] : ["--port", "0"];
  const child = spawn(process.execPath, [join(ROOT, "bin/slipway.js"), "up", "--host", "127.0.0.1", "--json", ...port, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const found: { apiKey?: string; workspaceId?: string } = {};
  let stopping = false;
  // A control plane that dies on its own fails the test later, far from the cause: tell it here.
  child.once("exit", (code, signal) => {
    if (!stopping) process.stderr.write(`slipway up (pid ${child.pid}) exited unexpectedly (${code ?? signal}); its last output:\n${output.slice(-12_000)}\n`);
  });
  const kill = (signal: NodeJS.Signals = "SIGTERM") =>
    new Promise<void>((resolve) => {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill(signal);
    });
  return new Promise((resolve, reject) => {
    let pending = "";
    child.stderr!.on("data", (chunk) => (output += chunk));
    child.stdout!.on("data", (chunk) => {
      output += chunk;
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.startsWith("{")) continue;
        const event = JSON.parse(line) as { event: string; url?: string; api_key?: string; workspace_id?: string };
        if (event.event === "bootstrap") Object.assign(found, { apiKey: event.api_key, workspaceId: event.workspace_id });
        if (event.event === "listening") resolve({ child, url: event.url!, ...found, output: () => output, kill });
      }
    });
    child.once("exit", (code) => reject(new Error(`slipway up exited with ${code}\n${output}`)));
  });
}
