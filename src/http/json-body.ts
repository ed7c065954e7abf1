import type { FastifyInstance } from "fastify";

/**
 * JSON bodies as FastAPI reads them: an empty body is no body, whatever the
 * Content-Type says. The vendor's sample client sends `Content-Type: application/json`
 * on every call, DELETE included, with nothing after it; Fastify's own parser answers
 * such a request "Body cannot be empty". A route whose schema needs a body still gets
 * none, and its validation answers 422 "Field required" at `body` (error-handler.ts).
 *
 * Anything that is not empty goes to Fastify's parser unchanged, prototype-poisoning
 * checks included.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const { onProtoPoisoning, onConstructorPoisoning } = app.initialConfig;
  const parse = app.getDefaultJsonParser(onProtoPoisoning ?? "error", onConstructorPoisoning ?? "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = body.toString();
    if (text.length === 0) return done(null, undefined);
    parse(request, text, done);
  });
}
