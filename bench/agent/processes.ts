import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, readFileSync, rmSync } from "node:fs";

/**
 * Child servers of the bench. Each is started in its own process group so that
 * stopping it also stops what it spawned (the peer's CLI runs its server in a
 * grandchild); every group is tracked here and stopped on exit, error or signal.
 */
export interface ServerProcess {
  name: string;
  child: ChildProcess;
  logPath: string;
}

const running = new Set<ServerProcess>();
const exitTasks: Array<() => void> = [];

/**
 * Runs `task` when the bench exits, however it exits (end, error, Ctrl-C). It must
 * be synchronous (exit handlers cannot wait) and safe to run twice.
 */
export function atExit(task: () => void): void {
  exitTasks.push(task);
}

/** A temporary directory removed when the bench exits. */
export function removeOnExit(dir: string): string {
  atExit(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export { freePort } from "../../test/support/ports.ts";

export function spawnServer(name: string, command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; logPath: string }): ServerProcess {
  const log = createWriteStream(options.logPath);
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const server = { name, child, logPath: options.logPath };
  running.add(server);
  child.once("exit", () => running.delete(server));
  return server;
}

/** Polls GET <url>/ok until it answers 200; fails early if the child dies. */
export async function waitHealthy(server: ServerProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`${server.name} exited before it was ready:\n${tail(server.logPath)}`);
    }
    try {
      const response = await fetch(`${url}/ok`, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${server.name} was not ready within ${timeoutMs} ms:\n${tail(server.logPath)}`);
}

export function tail(path: string, lines = 30): string {
  try {
    return readFileSync(path, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

function signalGroup(server: ServerProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-server.child.pid!, signal);
  } catch {
    // the group is already gone
  }
}

/** SIGTERM the group, wait for the leader to exit, then SIGKILL whatever is left. */
export async function stopServer(server: ServerProcess, graceMs = 5_000): Promise<void> {
  const exited = new Promise<void>((resolve) => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) resolve();
    else server.child.once("exit", () => resolve());
  });
  signalGroup(server, "SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, graceMs))]);
  // Grandchildren may outlive the leader; SIGKILL to the group reaches them too.
  signalGroup(server, "SIGKILL");
  running.delete(server);
}

export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((server) => stopServer(server)));
}

// Last resort when the bench dies abruptly: exit handlers must be synchronous.
process.on("exit", () => {
  for (const server of running) signalGroup(server, "SIGKILL");
  for (const task of exitTasks) {
    try {
      task();
    } catch {
      // keep going: the other tasks still matter
    }
  }
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void stopAll().finally(() => process.exit(130));
  });
}
