import type { FetchHandler } from "./load-app.ts";

/**
 * Where `@langchain/langgraph-sdk`'s `Client`, made without an `apiUrl`, looks for a fetch
 * of its own (SDK 0.0.x to 1.x read it in the client's constructor). The vendor's
 * server puts one there that calls its app in process; a registered symbol, so that the
 * project's own copy of the SDK finds it too.
 */
const LOOPBACK_FETCH = Symbol.for("langgraph_api:fetch");

type GlobalWithLoopback = { [LOOPBACK_FETCH]?: (input: string | URL | Request, init?: RequestInit) => Promise<Response> };

/**
 * Makes `new Client()` inside this process (a route of the project's `http.app`, a graph
 * node) reach this server without a socket: each request goes to `handler` as a fetch
 * Request, whatever host its URL names (the SDK's default is http://localhost:8123). The
 * call comes from the deployment's own code, so it carries the server's own key
 * (`--api-key`; behind `slipway up`, the router's key, which the project never sees)
 * in place of whatever key the client found in the environment; custom auth
 * (`auth.path`) still applies, as on the vendor's server.
 *
 * Returns the undoing: the hook is removed if it is still this server's.
 */
export function bindLoopbackFetch(handler: FetchHandler, apiKey: string | undefined): () => void {
  const target = globalThis as GlobalWithLoopback;
  const loopback = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    if (apiKey) request.headers.set("x-api-key", apiKey);
    return handler(request);
  };
  target[LOOPBACK_FETCH] = loopback;
  return () => {
    if (target[LOOPBACK_FETCH] === loopback) delete target[LOOPBACK_FETCH];
  };
}
