import { extname } from "node:path";
import { Type } from "@sinclair/typebox";
import { notFound } from "../../http/errors.ts";
import { uiGlobalName, type UiAsset } from "./bundle.ts";
import type { HttpApp } from "../../http/server.ts";

const MIME: Record<string, string> = { ".js": "application/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".map": "application/json" };

/**
 * Generative UI, in the vendor's shapes. `POST /ui/{graph_id}` with `{name}` answers
 * an HTML fragment: a stylesheet link per CSS file, then a script tag for the bundle
 * whose onload renders component `name` into the shadow root "{{shadowRootId}}". That
 * placeholder stays literal: the SDK's LoadExternalComponent sends only the name and
 * puts its own shadow root's id in place of it, as with the vendor's server. `GET /ui/{graph_id}/{file}`
 * serves the bundle's files. Absolute URLs, built from the request's Host (and the
 * mount prefix), as the vendor builds them.
 */
export function registerUiRoutes(app: HttpApp, assets: Map<string, UiAsset[]>, mountPrefix = ""): void {
  app.post(
    "/ui/:graph_id",
    {
      schema: {
        tags: ["UI"],
        params: Type.Object({ graph_id: Type.String() }),
        body: Type.Object({ name: Type.String() }, { additionalProperties: true }),
      },
    },
    async (request, reply) => {
      const { graph_id: graphId } = request.params;
      const { name } = request.body;
      const files = assets.get(graphId);
      if (!files?.length) throw notFound(`UI not found for graph "${graphId}"`);
      const forwarded = request.headers["x-forwarded-proto"];
      const proto = typeof forwarded === "string" && /^https?$/.test(forwarded) ? forwarded : "http";
      const base = `${proto}://${request.headers.host}${mountPrefix}/ui/${encodeURIComponent(graphId)}`;
      const lines: string[] = [];
      for (const css of files.filter((file) => extname(file.basename) === ".css")) {
        lines.push(`<link rel="stylesheet" href="${base}/${css.basename}" />`);
      }
      const js = files.find((file) => extname(file.basename) === ".js");
      if (js) {
        // JSON strings inside a single-quoted attribute: a quote in them would end it.
        const quoted = JSON.stringify(name).replaceAll("'", "\\u0027");
        lines.push(`<script src="${base}/${js.basename}" onload='${uiGlobalName(graphId)}.render(${quoted}, "{{shadowRootId}}")'></script>`);
      }
      return reply.type("text/html").send(lines.join("\n"));
    },
  );

  app.get(
    "/ui/:graph_id/:file",
    { schema: { tags: ["UI"], params: Type.Object({ graph_id: Type.String(), file: Type.String() }) } },
    async (request, reply) => {
      const { graph_id: graphId, file } = request.params;
      const asset = assets.get(graphId)?.find((item) => item.basename === file);
      if (!asset) throw notFound(`File not found: ${file}`);
      return reply.type(MIME[extname(file)] ?? "application/octet-stream").send(Buffer.from(asset.contents));
    },
  );
}
