import { request } from "node:http";

/**
 * Calls an agent process on its Unix socket, as the router does (fetch cannot): the
 * tests use it to check what the processes themselves accept.
 */
export function callSocket(
  socketPath: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const call = request({ socketPath, path, method: init.method ?? "GET", headers: init.headers, agent: false }, (answer) => {
      let body = "";
      answer.setEncoding("utf8");
      answer.on("data", (chunk: string) => (body += chunk));
      answer.once("end", () => resolve({ status: answer.statusCode ?? 0, body }));
      answer.once("error", reject);
    });
    call.once("error", reject);
    call.end(init.body);
  });
}

/** The sockets the deploy log says a revision's processes listen on, in order. */
export function listeningSockets(deployLog: string): string[] {
  return [...deployLog.matchAll(/listening on unix:(\S+?\.sock)/g)].map((match) => match[1]);
}

/** The database sockets the deploy log says a deployment's containers reach PostgreSQL through (the Docker runtime). */
export function databaseSockets(deployLog: string): string[] {
  return [...new Set([...deployLog.matchAll(/PostgreSQL through unix:(\S+?\.s\.PGSQL\.\d+)/g)].map((match) => match[1]))];
}
