import { Type } from "@sinclair/typebox";
import { SlipwayError } from "../../http/errors.ts";
import {
  GetThreadQuery,
  ThreadCountSchema,
  ThreadCreateSchema,
  ThreadIdParams,
  ThreadPatchSchema,
  ThreadPruneResponseSchema,
  ThreadPruneSchema,
  ThreadSchema,
  ThreadSearchSchema,
} from "./schemas.ts";
import type { ThreadService } from "./service.ts";
import { registerThreadStateRoutes } from "./state-routes.ts";
import type { ThreadStateService } from "./state-service.ts";
import { toThread } from "./wire.ts";
import { errorResponses, setPaginationHeaders } from "../route-helpers.ts";
import type { HttpApp } from "../../http/server.ts";

export interface ThreadRouteDeps {
  threads: ThreadService;
  /** Thread state, history and storage (state-routes.ts). */
  state: ThreadStateService;
}

const tags = ["Threads"];
const errors = errorResponses(404, 409, 422);

/** The threads group: CRUD, search, count, copy, prune, and (state-routes.ts) state and history. */
export function registerThreadRoutes(app: HttpApp, deps: ThreadRouteDeps): void {
  const { threads } = deps;

  app.post("/threads", { schema: { tags, summary: "Create Thread", body: ThreadCreateSchema, response: { 200: ThreadSchema, ...errors } } }, async (request) =>
    toThread(await threads.create(request.body)),
  );

  app.post(
    "/threads/search",
    {
      schema: {
        tags,
        summary: "Search Threads",
        description: "Sets X-Pagination-Total and, when more follow, X-Pagination-Next, as the vendor's server does.",
        body: ThreadSearchSchema,
        response: { 200: Type.Array(ThreadSchema), ...errors },
      },
    },
    async (request, reply) => {
      const page = await threads.search(request.body);
      setPaginationHeaders(reply, { offset: request.body.offset ?? 0, count: page.threads.length, next: page.next });
      return page.threads;
    },
  );

  app.post(
    "/threads/count",
    { schema: { tags, summary: "Count Threads", body: ThreadCountSchema, response: { 200: Type.Integer(), ...errors } } },
    async (request) => threads.count(request.body),
  );

  app.post(
    "/threads/prune",
    { schema: { tags, summary: "Prune Threads", body: ThreadPruneSchema, response: { 200: ThreadPruneResponseSchema, ...errors } } },
    async (request) => ({ pruned_count: await threads.prune(request.body.thread_ids, request.body.strategy ?? "delete") }),
  );

  app.get(
    "/threads/:thread_id",
    { schema: { tags, summary: "Get Thread", params: ThreadIdParams, querystring: GetThreadQuery, response: { 200: ThreadSchema, ...errors } } },
    async (request) => {
      const include = parseInclude(request.query.include);
      return toThread(await threads.get(request.params.thread_id), { includeTtl: include.has("ttl") });
    },
  );

  app.patch(
    "/threads/:thread_id",
    {
      schema: {
        tags,
        summary: "Patch Thread",
        description: "Merges metadata into the thread's metadata and/or sets its TTL. `Prefer: return=minimal` answers 204 without a body.",
        params: ThreadIdParams,
        body: ThreadPatchSchema,
        response: { 200: ThreadSchema, 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      const row = await threads.patch(request.params.thread_id, request.body);
      if (/\breturn=minimal\b/.test(String(request.headers.prefer ?? ""))) return reply.status(204).send(null);
      return toThread(row, { includeTtl: !!request.body.ttl });
    },
  );

  app.delete(
    "/threads/:thread_id",
    { schema: { tags, summary: "Delete Thread", params: ThreadIdParams, response: { 200: Type.Null(), ...errors } } },
    async (request) => {
      await threads.delete(request.params.thread_id);
      return null;
    },
  );

  app.post(
    "/threads/:thread_id/copy",
    { schema: { tags, summary: "Copy Thread", params: ThreadIdParams, response: { 200: ThreadSchema, ...errors } } },
    async (request) => toThread(await threads.copy(request.params.thread_id)),
  );

  registerThreadStateRoutes(app, deps.state);
}

/** `include` as the SDK sends it (repeated) or comma-separated; unknown names are refused. */
function parseInclude(include: string | string[] | undefined): Set<string> {
  const names = (Array.isArray(include) ? include : include ? [include] : [])
    .flatMap((part) => part.split(","))
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of names) {
    if (name !== "ttl") {
      const msg = `unknown field "${name}"; supported: ttl`;
      throw new SlipwayError("invalid", `include: ${msg}`, { problems: [{ loc: ["query", "include"], msg, type: "value_error" }] });
    }
  }
  return new Set(names);
}
