import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { dirname, join } from "node:path";
import { freePort } from "./ports.ts";

/**
 * Real git servers on loopback for the pipeline's tests: `git daemon` (git://) and
 * `git http-backend` behind a small HTTP server (http://, optionally requiring a token
 * as a Basic password or a Bearer header), serving bare repositories under `root`.
 */
export interface GitServer {
  /** The URL of repository `name` (a bare repository under root). */
  url(name: string): string;
  /** What to give an integration as base_url. */
  baseUrl: string;
  stop(): Promise<void>;
}

const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: "utf8" }).trim();
}

/**
 * A working copy whose commits are pushed to a bare repository `root/<name>.git`.
 * `commit` writes files (path → content; null deletes), commits and pushes; returns the sha.
 */
export class TestRepository {
  readonly work: string;
  readonly bare: string;

  constructor(root: string, name: string, branch = "main") {
    this.bare = join(root, `${name}.git`);
    this.work = join(root, `${name}.work`);
    mkdirSync(this.work, { recursive: true });
    git(root, "init", "-q", "--bare", "-b", branch, this.bare);
    git(this.work, "init", "-q", "-b", branch);
    git(this.work, "remote", "add", "origin", this.bare);
    this.branch = branch;
  }

  private branch: string;

  /** Copies a directory into the working copy (before the first commit, typically). */
  copyFrom(dir: string): void {
    cpSync(dir, this.work, { recursive: true, filter: (source) => !source.includes("node_modules") });
  }

  commit(files: Record<string, string | null> = {}, message = "change"): string {
    for (const [path, content] of Object.entries(files)) {
      const target = join(this.work, path);
      if (content === null) rmSync(target, { force: true });
      else {
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, content);
      }
    }
    git(this.work, "add", "-A");
    git(this.work, "commit", "-q", "--allow-empty", "-m", message);
    git(this.work, "push", "-q", "origin", `HEAD:refs/heads/${this.branch}`);
    return git(this.work, "rev-parse", "HEAD");
  }
}

/** `git daemon` serving every repository under root over git://127.0.0.1:<port>/. */
export async function startGitDaemon(root: string): Promise<GitServer> {
  const port = await freePort();
  const daemon: ChildProcess = spawn(
    "git",
    ["daemon", "--reuseaddr", "--export-all", `--base-path=${root}`, "--listen=127.0.0.1", `--port=${port}`, "--informative-errors", root],
    { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, ...GIT_ENV } },
  );
  await waitForPort(port);
  return {
    url: (name) => `git://127.0.0.1:${port}/${name}.git`,
    baseUrl: `git://127.0.0.1:${port}/`,
    stop: () =>
      new Promise((resolve) => {
        if (daemon.exitCode !== null) return resolve();
        daemon.once("exit", () => resolve());
        daemon.kill("SIGTERM");
      }),
  };
}

/** `git http-backend` (smart HTTP) behind a Node server; with `token`, requests without it get 401. */
export async function startGitHttp(root: string, options: { token?: string } = {}): Promise<GitServer & { requests: string[] }> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const auth = req.headers.authorization ?? "";
    requests.push(`${req.method} ${url.pathname} ${auth ? "auth" : "anonymous"}`);
    if (options.token) {
      const basic = auth.startsWith("Basic ") ? Buffer.from(auth.slice(6), "base64").toString().split(":").slice(1).join(":") : undefined;
      const bearer = auth.startsWith("Bearer ") ? auth.slice(7) : undefined;
      if (basic !== options.token && bearer !== options.token) {
        res.writeHead(401, { "www-authenticate": 'Basic realm="git"' });
        res.end("token required");
        return;
      }
    }
    const cgi = spawn("git", ["http-backend"], {
      env: {
        ...process.env,
        ...GIT_ENV,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? "GET",
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        HTTP_CONTENT_ENCODING: req.headers["content-encoding"] ?? "",
        HTTP_GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
        REMOTE_ADDR: "127.0.0.1",
      },
      stdio: ["pipe", "pipe", "ignore"],
    });
    req.pipe(cgi.stdin!);
    // CGI output: headers, a blank line, then the body.
    let head = Buffer.alloc(0);
    let sent = false;
    cgi.stdout!.on("data", (chunk: Buffer) => {
      if (sent) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end === -1) return;
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head.subarray(0, end).toString().split("\r\n")) {
        const [name, ...rest] = line.split(":");
        const value = rest.join(":").trim();
        if (name.toLowerCase() === "status") status = Number(value.split(" ")[0]);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      sent = true;
      res.write(head.subarray(end + 4));
    });
    cgi.once("close", () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    requests,
    url: (name) => `http://127.0.0.1:${port}/${name}.git`,
    baseUrl: `http://127.0.0.1:${port}/`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function waitForPort(port: number): Promise<void> {
  const { connect } = await import("node:net");
  for (let i = 0; i < 100; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nothing listens on port ${port}`);
}
