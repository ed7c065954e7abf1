import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { delimiter, join } from "node:path";

/** Where the suite's Docker runtime tests reach dockerd, and how to stop it if the suite started it. */
export interface TestDockerd {
  /** `unix://...`, or "" when docker is not installed here. */
  host: string;
  stop(): Promise<void>;
}

const OWN_SOCKET = "/run/slipway-test-dockerd.sock";

/**
 * dockerd for the Docker runtime tests (Debian's docker.io, which .ci/run installs): the
 * one already running (DOCKER_HOST or the default socket), else one started here, as
 * root, on a socket of its own, and stopped at the end of the run. Without docker
 * installed, host is "" and those tests fail saying so.
 */
export async function ensureDockerd(): Promise<TestDockerd> {
  const nothing = async () => undefined;
  const given = process.env.DOCKER_HOST || "unix:///var/run/docker.sock";
  if (!onPath("docker") || !onPath("dockerd")) return { host: "", stop: nothing };
  if (answers(given)) return { host: given, stop: nothing };
  const host = `unix://${OWN_SOCKET}`;
  if (answers(host)) return { host, stop: nothing };
  mkdirSync("/run", { recursive: true });
  const daemon = spawn("dockerd", ["--host", host, "--pidfile", "/run/slipway-test-dockerd.pid"], { stdio: "ignore", detached: true });
  const exited = new Promise<void>((resolve) => daemon.once("exit", () => resolve()));
  for (let i = 0; i < 120 && daemon.exitCode === null; i++) {
    if (answers(host)) {
      return {
        host,
        stop: async () => {
          daemon.kill("SIGTERM");
          // unref: a daemon that exits at once leaves no timer holding the test run open.
          await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000).unref())]);
          if (daemon.exitCode === null) daemon.kill("SIGKILL");
        },
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  daemon.kill("SIGKILL");
  throw new Error("dockerd did not start within 60 s");
}

function answers(host: string): boolean {
  if (host.startsWith("unix://") && !existsSync(host.slice("unix://".length))) return false;
  try {
    execFileSync("docker", ["--host", host, "version", "--format", "{{.Server.Version}}"], { stdio: "ignore", timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

function onPath(program: string): boolean {
  return (process.env.PATH ?? "").split(delimiter).some((dir) => dir && existsSync(join(dir, program)));
}
