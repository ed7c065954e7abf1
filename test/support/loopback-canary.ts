import { createServer, type Server, type Socket } from "node:net";

/**
 * TCP listeners on loopback addresses that record who connected to them, and the first
 * bytes sent (an HTTP request head, a TLS ClientHello, git's daemon request, ssh's
 * banner), then hang up. They stand for the services a git fetch must not reach, and for
 * allowed hosts whose connections a test wants to see: the connection is the ground
 * truth of where git went, whatever any parser said.
 */
export interface CanaryHit {
  /** `127.0.0.1:1234` or `[::1]:1234`: the listener that was reached. */
  listener: string;
  /** The first bytes the client sent, as latin1 text (empty if it sent none within a second). */
  head: string;
}

export interface Canary {
  host: string;
  port: number;
  /** `host:port`, brackets around IPv6. */
  hostPort: string;
  hits: CanaryHit[];
  close(): Promise<void>;
}

export async function startCanary(host: string, port = 0, hits: CanaryHit[] = []): Promise<Canary> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    let head = "";
    const done = () => {
      if (!sockets.has(socket)) return;
      sockets.delete(socket);
      clearTimeout(timer);
      hits.push({ listener: hostPort, head });
      socket.destroy();
    };
    const timer = setTimeout(done, 1000);
    socket.once("data", (chunk: Buffer) => {
      head = chunk.toString("latin1");
      done();
    });
    socket.once("error", done);
    socket.once("close", done);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === "object" && address ? address.port : port;
  const hostPort = host.includes(":") ? `[${host}]:${bound}` : `${host}:${bound}`;
  return {
    host,
    port: bound,
    hostPort,
    hits,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The Authorization header of an HTTP request head, if any. */
export function authorizationOf(head: string): string | undefined {
  return /\r\nauthorization: *([^\r\n]*)/i.exec(head)?.[1];
}
