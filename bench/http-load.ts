// A small autocannon-style load generator: keep-alive TCP connections, each with a
// few pipelined HTTP/1.1 requests in flight, counting responses by status. Raw
// sockets keep the client's own cost well below the server's, so the server is
// what gets measured. Loopback use only.
import { connect, type Socket } from "node:net";

export interface LoadOptions {
  host: string;
  port: number;
  /** Requests to send, as complete HTTP/1.1 messages; connections cycle through them. */
  requests: Buffer[];
  connections: number;
  /** Requests in flight per connection. */
  pipelining: number;
  durationMs: number;
  /** Stop early after this many responses. */
  maxRequests: number;
}

export interface LoadResult {
  responses: number;
  byStatus: Record<number, number>;
  elapsedMs: number;
  requestsPerSecond: number;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const byStatus: Record<number, number> = {};
  let responses = 0;
  let sent = 0;
  let stopping = false;
  const started = performance.now();
  const deadline = setTimeout(() => (stopping = true), options.durationMs);

  const connection = (index: number) =>
    new Promise<void>((resolve, reject) => {
      const socket: Socket = connect({ host: options.host, port: options.port, noDelay: true });
      let pending = "";
      let inFlight = 0;
      let next = index;
      const send = () => {
        while (!stopping && inFlight < options.pipelining && sent < options.maxRequests) {
          socket.write(options.requests[next++ % options.requests.length]!);
          inFlight++;
          sent++;
        }
        if (inFlight === 0) socket.end();
      };
      socket.on("connect", send);
      socket.on("data", (chunk: Buffer) => {
        pending += chunk.toString("latin1");
        for (;;) {
          const headEnd = pending.indexOf("\r\n\r\n");
          if (headEnd === -1) break;
          const head = pending.slice(0, headEnd);
          const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
          const total = headEnd + 4 + (length ? Number(length[1]) : 0);
          if (pending.length < total) break;
          const status = Number(head.slice(9, 12));
          byStatus[status] = (byStatus[status] ?? 0) + 1;
          responses++;
          inFlight--;
          pending = pending.slice(total);
        }
        if (responses >= options.maxRequests) stopping = true;
        send();
      });
      socket.on("close", () => resolve());
      socket.on("error", reject);
    });

  await Promise.all(Array.from({ length: options.connections }, (_, i) => connection(i)));
  clearTimeout(deadline);
  const elapsedMs = performance.now() - started;
  return { responses, byStatus, elapsedMs, requestsPerSecond: (responses / elapsedMs) * 1000 };
}

/** A GET request as bytes, ready to be written to a socket. */
export function getRequest(path: string, headers: Record<string, string> = {}): Buffer {
  const lines = [`GET ${path} HTTP/1.1`, "host: 127.0.0.1", ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  return Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
}
