import type { FastifyRequest } from "fastify";
import { Type } from "@sinclair/typebox";
import { openCronAccess, type CronAuthorizer } from "./access.ts";
import {
  CronCountSchema,
  CronCreateSchema,
  CronIdParams,
  CronPatchSchema,
  CronSchema,
  CronSearchSchema,
  ThreadCronCreateSchema,
  ThreadIdParams,
  type Cron,
  type CronSearch,
} from "./schemas.ts";
import type { CronService } from "./service.ts";
import { selectFields, toCron } from "./wire.ts";
import { errorResponses, setPaginationHeaders } from "../route-helpers.ts";
import type { HttpApp } from "../../http/server.ts";

interface CronRouteDeps {
  crons: CronService;
  /** Custom auth's say on each call (access.ts); open by default. */
  authorize?: CronAuthorizer;
}

const tags = ["Crons"];
const errors = errorResponses(404, 422);

/** The crons API as the vendor's agent server and its SDKs speak it. HTTP only. */
export function registerCronRoutes(app: HttpApp, deps: CronRouteDeps): void {
  const { crons } = deps;
  const authorize = deps.authorize ?? openCronAccess;
  // Search and count have nothing required: a bare POST means "{}".
  const emptyBodyIsObject = async (request: FastifyRequest) => {
    if (request.body === undefined || request.body === null) request.body = {};
  };

  app.post(
    "/runs/crons",
    {
      schema: {
        tags,
        summary: "Create Cron",
        description: "A cron whose every firing runs on a new thread (`on_run_completed`: delete it after the run, the default, or keep it).",
        body: CronCreateSchema,
        response: { 200: CronSchema, ...errors },
      },
    },
    async (request) => {
      const access = await authorize(request, "create", request.body);
      return toCron(await crons.create(null, request.body, access));
    },
  );

  app.post(
    "/threads/:thread_id/runs/crons",
    {
      schema: {
        tags,
        summary: "Create Thread Cron",
        description: "A cron whose every firing runs on this thread, under its `multitask_strategy` (default enqueue).",
        params: ThreadIdParams,
        body: ThreadCronCreateSchema,
        response: { 200: CronSchema, ...errors },
      },
    },
    async (request) => {
      const access = await authorize(request, "create", { ...request.body, thread_id: request.params.thread_id });
      return toCron(await crons.create(request.params.thread_id, request.body, access));
    },
  );

  // `select` projects rows to some fields, which the cron schema requires: the reply is
  // typed as what it is, a projection, and written without that schema.
  app.post<{ Body: CronSearch; Reply: Array<Partial<Cron>> }>(
    "/runs/crons/search",
    {
      preValidation: emptyBodyIsObject,
      schema: {
        tags,
        summary: "Search Crons",
        description: "Sets X-Pagination-Total and, when more follow, X-Pagination-Next, as the vendor's server does.",
        body: CronSearchSchema,
        response: { 200: Type.Array(CronSchema), ...errors },
      },
    },
    async (request, reply) => {
      const access = await authorize(request, "search", request.body);
      const page = await crons.search(request.body, access);
      setPaginationHeaders(reply, { offset: request.body.offset ?? 0, count: page.rows.length, next: page.next });
      // `select` leaves out fields the list schema requires; write those pages as they are.
      if (request.body.select?.length) reply.serializer(JSON.stringify);
      return page.rows.map((row) => selectFields(toCron(row), request.body.select));
    },
  );

  app.post(
    "/runs/crons/count",
    {
      preValidation: emptyBodyIsObject,
      schema: { tags, summary: "Count Crons", body: CronCountSchema, response: { 200: Type.Integer(), ...errors } },
    },
    async (request) => crons.count(request.body, await authorize(request, "search", request.body)),
  );

  app.get("/runs/crons/:cron_id", { schema: { tags, summary: "Get Cron", params: CronIdParams, response: { 200: CronSchema, ...errors } } }, async (request) =>
    toCron(await crons.get(request.params.cron_id, await authorize(request, "read", { cron_id: request.params.cron_id }))),
  );

  app.patch(
    "/runs/crons/:cron_id",
    {
      schema: {
        tags,
        summary: "Update Cron",
        description: "Changes the given fields; `metadata` merges. A new schedule, timezone, end_time or enabled counts the next firing from now.",
        params: CronIdParams,
        body: CronPatchSchema,
        response: { 200: CronSchema, ...errorResponses(400, 404, 422) },
      },
    },
    async (request) => {
      const access = await authorize(request, "update", { ...request.body, cron_id: request.params.cron_id });
      return toCron(await crons.update(request.params.cron_id, request.body, access));
    },
  );

  app.delete(
    "/runs/crons/:cron_id",
    { schema: { tags, summary: "Delete Cron", params: CronIdParams, response: { 200: Type.Null(), ...errors } } },
    async (request) => {
      await crons.delete(request.params.cron_id, await authorize(request, "delete", { cron_id: request.params.cron_id }));
      return null;
    },
  );
}
