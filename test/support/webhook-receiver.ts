import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** A loopback HTTP server that keeps the JSON body (and the headers) of every webhook posted to it. */
export async function startWebhookReceiver(): Promise<{
  url: string;
  received: Array<Record<string, unknown>>;
  headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}> {
  const received: Array<Record<string, unknown>> = [];
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      received.push(JSON.parse(body));
      headers.push(req.headers);
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    headers,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
