import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { ConfinedLaunch } from "../runtime/isolation.ts";

export interface CommandOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
}

interface CommandOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Each line the program prints, with the stream it came on. */
  output: (line: string, stream: "stdout" | "stderr") => void;
  signal: AbortSignal;
  timeoutMs?: number;
  /** Runs it in the deployment's sandbox (project code: installs, build commands, the graph check). */
  confine?: (argv: string[], firstFd: number, cwd: string) => ConfinedLaunch;
}

/**
 * Runs one program with its arguments (never through a shell: refs, URLs and names are
 * arguments, not text to interpret), sending each line it prints to the log. Resolves
 * with how it ended; an abort kills it (SIGTERM, then SIGKILL after 5 s).
 */
export function runCommand(program: string, args: readonly string[], options: CommandOptions): Promise<CommandOutcome> {
  return new Promise((resolve, reject) => {
    if (options.signal.aborted) return reject(options.signal.reason);
    const launch = options.confine?.([program, ...args], 3, options.cwd);
    const command = launch?.command ?? { program, args, fds: [] };
    const child = spawn(command.program, command.args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe", ...command.fds],
      detached: process.platform !== "win32",
    });
    launch?.spawned();
    let timedOut = false;
    const kill = () => {
      killTree(child.pid, "SIGTERM");
      setTimeout(() => killTree(child.pid, "SIGKILL"), 5_000).unref();
    };
    const timer = options.timeoutMs
      ? setTimeout(() => {
          timedOut = true;
          kill();
        }, options.timeoutMs)
      : undefined;
    const onAbort = () => kill();
    options.signal.addEventListener("abort", onAbort, { once: true });
    createInterface({ input: child.stdout! }).on("line", (line) => options.output(line, "stdout"));
    createInterface({ input: child.stderr! }).on("line", (line) => options.output(line, "stderr"));
    child.once("error", (error) => {
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      const limited = launch?.finish();
      if (limited) options.output(`Stopped by its resource limits: ${limited}.`, "stderr");
      options.signal.removeEventListener("abort", onAbort);
      if (options.signal.aborted) return reject(options.signal.reason);
      resolve({ code, signal, timedOut });
    });
  });
}

/** Signals the child's whole process group (an install spawns children of its own). */
function killTree(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(process.platform === "win32" ? pid : -pid, signal);
  } catch {
    // already gone
  }
}
