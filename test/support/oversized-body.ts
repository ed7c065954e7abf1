import { request } from "node:http";

/**
 * Sends a body of `bytes` zeros (64 KiB chunks, with Content-Length or chunked) and
 * stops sending as soon as the server answers, as a client whose body was refused would.
 * Resolves with the status, or 0 when the server closed the connection without one.
 */
export function sendOversized(
  url: string,
  options: { method: string; bytes: number; chunked: boolean; headers?: Record<string, string> },
): Promise<{ status: number; text: string }> {
  const chunk = Buffer.alloc(64 * 1024);
  return new Promise((resolve) => {
    let answered = false;
    const headers: Record<string, string> = { "content-type": "application/json", ...options.headers };
    if (!options.chunked) headers["content-length"] = String(options.bytes);
    const req = request(url, { method: options.method, headers });
    req.on("response", (response) => {
      answered = true;
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (part: string) => (text += part));
      response.on("end", () => {
        req.destroy();
        resolve({ status: response.statusCode ?? 0, text });
      });
      response.on("error", () => resolve({ status: response.statusCode ?? 0, text }));
    });
    req.on("error", () => {
      if (!answered) resolve({ status: 0, text: "" });
    });
    let sent = 0;
    const write = () => {
      while (!answered && !req.destroyed && sent < options.bytes) {
        const part = chunk.subarray(0, Math.min(chunk.length, options.bytes - sent));
        sent += part.length;
        if (!req.write(part)) return void req.once("drain", write);
      }
      if (!answered && !req.destroyed) req.end();
    };
    write();
  });
}
