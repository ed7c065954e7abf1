import type { FetchHandler } from "../http-app/load-app.ts";
import type { PythonWorker } from "./worker.ts";

/** What the worker sends while the app answers: the response's start, then pieces of its body. */
type Part = { status: number; headers: [string, string][] } | { body: string };

/**
 * A Python `http.app` (an ASGI app the worker loaded) as a fetch handler: each request goes
 * to the worker whole, and the response streams back as the app sends it. A client that
 * goes away cancels the request in the worker, which the app sees as a disconnect.
 */
export function pythonHttpApp(worker: PythonWorker): FetchHandler {
  return async (request) => {
    const url = new URL(request.url);
    const body = Buffer.from(await request.arrayBuffer()).toString("base64");
    let stream!: ReadableStreamDefaultController<Uint8Array>;
    const readable = new ReadableStream<Uint8Array>({ start: (controller) => void (stream = controller) });
    const answered = new Promise<Response>((resolve, reject) => {
      let started = false;
      const onChunk = (chunk: unknown) => {
        const part = chunk as Part;
        if ("status" in part) {
          started = true;
          // A status without a body (204, 304) takes none, as the fetch Response requires.
          const empty = part.status === 204 || part.status === 304 || request.method === "HEAD";
          resolve(new Response(empty ? null : readable, { status: part.status, headers: part.headers }));
        } else if (started) stream.enqueue(Buffer.from(part.body, "base64"));
      };
      const sent = worker.request(
        "http",
        { method: request.method, path: url.pathname, query: url.search.slice(1), headers: [...request.headers.entries()], body },
        { onChunk },
        request.signal,
      );
      sent.then(
        () => {
          if (!started) reject(new Error("http.app answered without starting a response"));
          else stream.close();
        },
        (error: Error) => {
          if (!started) reject(error);
          else stream.error(error);
        },
      );
    });
    return answered;
  };
}
