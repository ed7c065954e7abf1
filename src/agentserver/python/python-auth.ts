import type { HandlerCache } from "../custom-auth/handlers.ts";
import type { PythonWorker } from "./worker.ts";

/** What the worker's `load_auth` says of the project's `Auth`: whether it authenticates, and its `on` handlers' keys. */
export interface PythonAuthShape {
  authenticate: boolean;
  /** `resource:action`, `resource`, `*:action` or `*`, as the JS `Auth` keys its callbacks. */
  handlers: string[];
}

/** The SDK's HTTPException raised by a Python handler, as custom-auth/handlers.ts recognises one (status and headers). */
interface Refused {
  status: number;
  detail: string;
  headers: Record<string, string>;
}

function refusal(refused: Refused): Error {
  return Object.assign(new Error(refused.detail), { status: refused.status, headers: refused.headers });
}

/**
 * A Python `auth.path` (a `langgraph_sdk.Auth`) in the shape of the JS SDK's handler
 * cache, so the server applies it with the same rules as a JS one (decision 0015):
 * each handler is a request to the worker. A handler changes the value it is given
 * in place (an owner in its metadata); the worker sends the value back and it is
 * written over the server's, which the route guards then read.
 */
export function pythonAuthHandlers(worker: PythonWorker, shape: PythonAuthShape): HandlerCache {
  const authenticate = async (request: Request, details: { pathParams?: Record<string, string> } = {}) => {
    const url = new URL(request.url);
    const answer = (await worker.request("authenticate", {
      method: request.method,
      path: url.pathname,
      query: url.search.slice(1),
      headers: Object.fromEntries(request.headers.entries()),
      path_params: details.pathParams ?? {},
    })) as { user?: unknown; refused?: Refused };
    if (answer.refused) throw refusal(answer.refused);
    return answer.user;
  };
  const callback =
    (key: string) =>
    async (parameter: Record<string, unknown>): Promise<unknown> => {
      const { resource, action, permissions, user } = parameter;
      const value = parameter.value as Record<string, unknown>;
      const answer = (await worker.request("authorize", { key, resource, action, permissions, user, value })) as {
        result?: unknown;
        value?: Record<string, unknown>;
        refused?: Refused;
      };
      if (answer.refused) throw refusal(answer.refused);
      if (answer.value && typeof answer.value === "object") {
        for (const name of Object.keys(value)) if (!(name in answer.value)) delete value[name];
        Object.assign(value, answer.value);
      }
      return answer.result;
    };
  return {
    ...(shape.authenticate ? { authenticate } : {}),
    callbacks: Object.fromEntries(shape.handlers.map((key) => [key, callback(key)])),
  };
}
