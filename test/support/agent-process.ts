import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";

const BIN = fileURLToPath(new URL("../../bin/slipway.js", import.meta.url));

export interface AgentProcess {
  child: ChildProcess;
  url: string;
  /** Output so far, for assertion messages. */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Runs `slipway agent` as a real child process and waits for its "listening" line. */
export async function spawnAgent(args: string[], env: Record<string, string> = {}, startTimeoutMs = 60_000): Promise<AgentProcess> {
  const child = spawn(process.execPath, [BIN, "agent", "--port", "0", ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stderr!.on("data", (chunk) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agent did not start:\n${output}`)), startTimeoutMs);
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      output += `${line}\n`;
      try {
        const parsed = JSON.parse(line);
        if (parsed.event === "listening") {
          clearTimeout(timer);
          resolve(parsed.url);
        }
      } catch {
        // not our line
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`agent exited with ${code}:\n${output}`));
    });
  });
  return {
    child,
    url,
    output: () => output,
    kill: (signal = "SIGTERM") =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill(signal);
      }),
  };
}

export interface FinishedRun {
  /** Exit code; null when killed (on timeout, `timedOut` says so). */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  ms: number;
}

/**
 * Runs `slipway <args>` to its end (a command expected to exit: `agent --check`, or a
 * start that must fail), killing it after `timeoutMs` so that a hang fails the test.
 */
export function runSlipway(
  args: string[],
  options: { env?: Record<string, string | undefined>; timeoutMs?: number; uid?: number; gid?: number; cwd?: string } = {},
): Promise<FinishedRun> {
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
    uid: options.uid,
    gid: options.gid,
    cwd: options.cwd,
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => (stdout += chunk));
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, options.timeoutMs ?? 60_000);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut, ms: Date.now() - started });
    });
  });
}
