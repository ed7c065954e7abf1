import { spawn, type ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";

const CLI_ENV = /^(PATH|HOME|TMPDIR|DOCKER_[A-Z_]+|https?_proxy|no_proxy|HTTPS?_PROXY|NO_PROXY)$/;

/**
 * The `docker` command line, always with argument arrays (never a shell string): a
 * deployment's names and values go through as arguments. Values that must stay out of
 * `ps` (secrets, keys) are passed as `-e NAME` with the value in `env`.
 */
export class DockerCli {
  constructor(
    /** Where dockerd listens (`unix:///run/docker.sock`); else the CLI's default. */
    readonly host?: string,
    readonly program = "docker",
  ) {}

  /** Runs `docker <args>`; resolves with its stdout, rejects with its stderr. */
  run(args: string[], options: { input?: Readable; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = this.spawn(args, options.env, options.input ? "pipe" : "ignore");
      let stdout = "";
      let stderr = "";
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-8_000)));
      const timer = options.timeoutMs ? setTimeout(() => child.kill("SIGKILL"), options.timeoutMs) : undefined;
      if (options.input) {
        options.input.once("error", (error) => child.stdin!.destroy(error));
        child.stdin!.once("error", () => undefined);
        options.input.pipe(child.stdin!);
      }
      child.once("error", (error) => reject(new Error(`docker could not start: ${error.message}`)));
      child.once("close", (code, signal) => {
        if (timer) clearTimeout(timer);
        if (code === 0) resolve(stdout);
        else reject(new Error(`docker ${args[0]} failed (${signal ?? `exit ${code}`}): ${stderr.trim() || stdout.trim()}`));
      });
    });
  }

  /** Starts `docker <args>` with its output piped (an attached `docker run`). */
  spawn(args: string[], env?: NodeJS.ProcessEnv, stdin: "pipe" | "ignore" = "ignore"): ChildProcess {
    const host = this.host ? ["--host", this.host] : [];
    // The CLI gets what it needs of the control plane's environment, not its secrets.
    const own = Object.fromEntries(Object.entries(process.env).filter(([name]) => CLI_ENV.test(name)));
    return spawn(this.program, [...host, ...args], { env: { ...own, ...env }, stdio: [stdin, "pipe", "pipe"] });
  }

  /** dockerd's version; rejects, saying why, when it cannot be reached. */
  async serverVersion(): Promise<string> {
    return (await this.run(["version", "--format", "{{.Server.Version}}"], { timeoutMs: 20_000 })).trim();
  }

  /** Whether an image of that name is here. */
  async hasImage(image: string): Promise<boolean> {
    try {
      await this.run(["image", "inspect", "--format", "{{.Id}}", image]);
      return true;
    } catch {
      return false;
    }
  }

  /** The ids of containers carrying every one of these labels, running or not (`label` alone: carrying it at all). */
  async containers(labels: Record<string, string>, options: { runningOnly?: boolean } = {}): Promise<string[]> {
    const filters = Object.entries(labels).flatMap(([key, value]) => ["--filter", `label=${key}=${value}`]);
    const out = await this.run(["ps", ...(options.runningOnly ? [] : ["--all"]), "--quiet", "--no-trunc", ...filters]);
    return out.split("\n").filter(Boolean);
  }

  /** The ids of images carrying every one of these labels. */
  async images(labels: Record<string, string>): Promise<string[]> {
    const filters = Object.entries(labels).flatMap(([key, value]) => ["--filter", `label=${key}=${value}`]);
    const out = await this.run(["images", "--quiet", "--no-trunc", ...filters]);
    return [...new Set(out.split("\n").filter(Boolean))];
  }

  /** Removes containers, running or not (no error for ones already gone). */
  async remove(ids: string[]): Promise<void> {
    if (ids.length) await this.run(["rm", "--force", "--volumes", ...ids]).catch(() => undefined);
  }
}
