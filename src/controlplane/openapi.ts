import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";

/** Shared pieces of the control plane's OpenAPI document. */

export const Detail = Type.Object({ detail: Type.String() }, { title: "ErrorDetail" });

export const HTTPValidationError = Type.Object(
  {
    detail: Type.Array(
      Type.Object(
        {
          loc: Type.Array(Type.Union([Type.String(), Type.Integer()]), { title: "Location" }),
          msg: Type.String({ title: "Message" }),
          type: Type.String({ title: "Error Type" }),
        },
        { title: "ValidationError" },
      ),
      { title: "Detail" },
    ),
  },
  { title: "HTTPValidationError" },
);

/** Error responses every authenticated route may give; spread into `schema.response`. */
export const DETAIL_RESPONSES = {
  400: Detail,
  401: Detail,
  403: Detail,
  404: Detail,
  409: Detail,
  422: HTTPValidationError,
};

/** The vendor's three schemes, listed as alternatives as in its document. */
const SECURITY_SCHEMES = {
  "API Key": { type: "apiKey", in: "header", name: "X-Api-Key", description: "A Slipway API key (slw_...)." },
  "Tenant ID": {
    type: "apiKey",
    in: "header",
    name: "X-Tenant-Id",
    description: "The workspace to act in. Required with an organization-scoped credential.",
  },
  "Bearer Auth": {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "A JWT from the configured issuer carrying `org_id` (and optionally `workspace_id`); see docs/decisions/control-plane-auth.md.",
  },
} as const;

const SECURITY = [{ "API Key": [] }, { "Tenant ID": [] }, { "Bearer Auth": [] }];

/**
 * createHttpServer registers @fastify/swagger with title and version only; the security
 * schemes are added to the generated document once all routes exist. @fastify/swagger
 * builds the document once and caches it, so this edit is what /openapi.json serves.
 */
export function installOpenApiExtras(app: FastifyInstance, description: string): void {
  app.addHook("onReady", async () => {
    const doc = app.swagger() as unknown as {
      info: { description?: string };
      components?: { securitySchemes?: Record<string, unknown> };
      security?: unknown[];
    };
    doc.info.description = description;
    doc.components = { ...(doc.components ?? {}), securitySchemes: { ...SECURITY_SCHEMES } };
    doc.security = SECURITY;
  });
}

/** The same document for clients that use the /api-host mirror: its paths resolve under that prefix. */
export function apiHostDocument(app: FastifyInstance): Record<string, unknown> {
  return { ...(app.swagger() as unknown as Record<string, unknown>), servers: [{ url: "/api-host" }] };
}
