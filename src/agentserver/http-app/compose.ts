import type { FastifyBaseLogger } from "fastify";
import type { FetchHandler, ProjectHttpApp } from "./load-app.ts";

/**
 * One fetch handler for the whole server: the project's app first, the built-in routes
 * behind it.
 *
 * A Hono app is merged as the vendor's server merges it: its routes and middleware are
 * registered ahead of the built-in routes, so a route of its own answers first (and may
 * shadow a built-in one), and its middleware (`app.use`) runs for built-in routes too,
 * reading or replacing the request before `await next()` and the response after.
 * `builtIn` answers whatever the app leaves to `next()`.
 *
 * A plain fetch handler cannot call `next()`: a 404 from it means "not mine", and the
 * request goes on, unchanged, to the built-in routes.
 */
export function composeFetch(project: ProjectHttpApp, builtIn: FetchHandler, log: FastifyBaseLogger): FetchHandler {
  if (project.kind === "fetch") {
    const handler = project.fetch;
    return async (request) => {
      // The handler may read the body; the built-in routes still need it when it declines.
      const own = await handler(request.clone());
      return own.status === 404 ? builtIn(request) : own;
    };
  }
  const user = project.app;
  // The project's own Hono class, so that the versions match: Slipway does not ship Hono.
  const Hono = user.constructor as new () => typeof user;
  const outer = new Hono();
  outer.route("/", user);
  outer.all("*", async (c) => {
    let request = c.req.raw;
    // Middleware that read the body (c.req.json() ...) used up the raw stream; Hono keeps
    // what it read, and the built-in routes get it back, as on the vendor's server.
    if (request.bodyUsed) request = new Request(request, { body: await c.req.arrayBuffer() });
    return builtIn(request);
  });
  outer.onError((error, c) => {
    // An HTTPException (of whichever Hono the project has) answers with its own status and
    // message, headers its middleware set included: Hono's default, and so the vendor's.
    const own = (error as { getResponse?: () => Response }).getResponse;
    if (typeof own === "function") {
      const response = own.call(error);
      return c.newResponse(response.body, response);
    }
    log.error({ err: error }, "http.app failed");
    return Response.json({ detail: "Internal server error" }, { status: 500 });
  });
  return (request) => outer.fetch(request);
}
