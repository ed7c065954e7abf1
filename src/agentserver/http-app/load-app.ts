import type { ModuleRef } from "../graphs/config-sections.ts";
import { GraphLoadError } from "../graphs/load-error.ts";
import { importProjectExport } from "../graphs/project-module.ts";

/** A fetch handler: what `http.app` boils down to once loaded. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

/**
 * `http.app` as loaded: a Hono app (its routes and middleware are merged in front of the
 * built-in routes, as the vendor's server does with `app.route("/", userApp)`), or any
 * other fetch handler (an object with `fetch(request)`, or the function itself).
 */
export type ProjectHttpApp = { kind: "hono"; app: HonoLike } | { kind: "fetch"; fetch: FetchHandler };

/** The parts of a Hono instance used here, typed loosely: the project brings its own Hono. */
interface HonoLike {
  fetch: FetchHandler;
  route(path: string, app: HonoLike): unknown;
  all(path: string, handler: (c: { req: { raw: Request; arrayBuffer(): Promise<ArrayBuffer> } }) => Response | Promise<Response>): unknown;
  onError(handler: (error: Error, c: { newResponse(body: ReadableStream | null, init: ResponseInit): Response }) => Response | Promise<Response>): unknown;
  routes: unknown[];
}

export async function loadProjectHttpApp(ref: ModuleRef): Promise<ProjectHttpApp> {
  const value = await importProjectExport(ref);
  if (isHono(value)) return { kind: "hono", app: value };
  if (typeof value === "function") return { kind: "fetch", fetch: value as FetchHandler };
  const fetch = (value as { fetch?: unknown }).fetch;
  if (typeof fetch === "function") return { kind: "fetch", fetch: fetch.bind(value) as FetchHandler };
  throw new GraphLoadError(
    `${ref.key}: the export "${ref.exportName}" of ${ref.file} is neither a Hono app nor a fetch handler (an object with fetch(request), or a function)`,
    {
      file: ref.file,
    },
  );
}

function isHono(value: unknown): value is HonoLike {
  const app = value as Partial<HonoLike> | null;
  return (
    typeof app === "object" &&
    app !== null &&
    typeof app.fetch === "function" &&
    typeof app.route === "function" &&
    typeof app.all === "function" &&
    Array.isArray(app.routes)
  );
}
