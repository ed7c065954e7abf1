import type { IncomingMessage, ServerResponse } from "node:http";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerFactory, type RawServerDefault } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { installBodyLimit } from "./body-limit.ts";
import { canonicalUrl, type PathAlias } from "./canonical-url.ts";
import { installErrorHandler, type NotFoundHint, type ValidationStyle } from "./error-handler.ts";
import { installInputGuard } from "./input-guard.ts";
import { installJsonBodyParser } from "./json-body.ts";
import { installValidator, noDefaultValidator } from "./validator.ts";
import { lazySerializers } from "./serializer.ts";

/**
 * A Fastify app whose handlers take their request and reply types from the routes'
 * TypeBox schemas: no casts, no generics repeated beside a schema.
 */
export type HttpApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

interface HttpServerOptions {
  title: string;
  version: string;
  validationStyle: ValidationStyle;
  /** Largest accepted request body in bytes; larger ones get 413. */
  bodyLimit?: number;
  logLevel?: string;
  /** Prefixes that name the same routes (the control plane's /api-host): see canonical-url.ts. */
  pathAliases?: PathAlias[];
  /** Builds the node server around Fastify's handler (the deployment router goes in front). */
  serverFactory?: FastifyServerFactory;
  notFoundHint?: NotFoundHint;
}

const DOCS_OPERATION = {
  get: {
    tags: ["System"],
    summary: "API Documentation",
    description: "This server's API reference, rendered from /openapi.json.",
    operationId: "docs_get",
    responses: { 200: { description: "Success", content: { "text/html": {} } } },
  },
};

/**
 * One Fastify instance with the house rules: JSON errors in one shape, bodies
 * validated strictly (validator.ts: no coercion, unknown fields refused where the
 * schema closes them), every body held to its limit whoever reads it (body-limit.ts),
 * an empty JSON body taken as no body (json-body.ts), input
 * PostgreSQL cannot store refused before any route sees it (input-guard.ts), OpenAPI
 * generated from the route schemas and served at /openapi.json, a docs page at /docs,
 * and request targets made canonical before routing (canonical-url.ts), so that hooks
 * such as the rate limiter key on the path the router serves.
 */
export async function createHttpServer(options: HttpServerOptions): Promise<HttpApp> {
  const aliases = options.pathAliases ?? [];
  const app = Fastify({
    logger: { level: options.logLevel ?? process.env.SLIPWAY_LOG_LEVEL ?? "warn" },
    bodyLimit: options.bodyLimit ?? 10 * 1024 * 1024,
    rewriteUrl: (request) => canonicalUrl(request.url ?? "/", aliases),
    schemaController: { compilersFactory: { buildSerializer: lazySerializers(), buildValidator: noDefaultValidator } },
    ...(options.serverFactory ? { serverFactory: options.serverFactory } : {}),
  });
  installErrorHandler(app, options.validationStyle, options.notFoundHint);
  installValidator(app);
  installJsonBodyParser(app);
  installBodyLimit(app);
  installInputGuard(app);

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: { title: options.title, version: options.version },
    },
    hideUntagged: false,
    // The docs page is served by the swagger UI plugin, whose routes are hidden; it is
    // listed as the vendor's document lists it (GET /docs, tag System, text/html).
    transformObject: (document) => {
      const openapi = "openapiObject" in document ? document.openapiObject : document.swaggerObject;
      return { ...openapi, paths: { ...openapi.paths, "/docs": DOCS_OPERATION } } as typeof openapi;
    },
  });
  await app.register(swaggerUi, { routePrefix: "/docs", staticCSP: false });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  return app.withTypeProvider<TypeBoxTypeProvider>();
}
