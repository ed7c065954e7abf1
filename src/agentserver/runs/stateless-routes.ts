import { Type } from "@sinclair/typebox";
import { toRun, type RunRow } from "./repository.ts";
import { cancelOnDisconnect, errorResponses, sseResponse } from "../route-helpers.ts";
import type { RunRouteDeps } from "./routes.ts";
import { AnyValue, RunCreateStatelessSchema, RunSchema, RunsCancelSchema } from "./schemas.ts";
import { parseLastEventId, streamRun } from "./stream-response.ts";
import { createAndWaitResponse } from "./wait-response.ts";
import { invalidField } from "../../http/errors.ts";
import type { HttpApp } from "../../http/server.ts";

const errors = errorResponses(404, 409, 422);
const tags = ["Stateless Runs"];
const MAX_BATCH = 1000;

/** Runs without a thread of the caller's: POST /runs, /runs/stream, /runs/wait, /runs/batch, /runs/cancel. */
export function registerStatelessRunRoutes(app: HttpApp, deps: RunRouteDeps): void {
  const { runs } = deps;
  // Stateless runs are reachable by id alone; the SDK accepts both path shapes.
  const runPath = (run: RunRow) => `/runs/${run.run_id}`;
  // Nobody can join a deleted temporary thread later, so a stateless stream whose
  // client leaves is cancelled unless the caller asked to continue.
  const statelessDefaults = { onDisconnect: "cancel" as const };

  app.post("/runs", { schema: { tags, body: RunCreateStatelessSchema, response: { 200: RunSchema, ...errors } } }, async (request, reply) => {
    const run = await runs.create(null, request.body, { onDisconnect: "continue" });
    reply.header("Content-Location", runPath(run));
    return toRun(run);
  });

  app.post(
    "/runs/stream",
    {
      schema: {
        tags,
        body: RunCreateStatelessSchema,
        response: { ...sseResponse, ...errors },
      },
    },
    async (request, reply) => {
      const run = await runs.create(null, request.body, statelessDefaults);
      await streamRun(request, reply, {
        db: deps.db,
        streams: deps.streams,
        run,
        runPath: runPath(run),
        fromStart: true,
        heartbeatMs: deps.heartbeatMs,
        onDisconnect: run.kwargs.on_disconnect === "cancel" ? cancelOnDisconnect(runs, run, request.log) : undefined,
      });
    },
  );

  app.post("/runs/wait", { schema: { tags, body: RunCreateStatelessSchema, response: { 200: AnyValue, ...errors } } }, async (request, reply) => {
    return createAndWaitResponse(request, reply, runs, { threadId: null, body: request.body, defaults: statelessDefaults }, runPath);
  });

  app.post(
    "/runs/batch",
    {
      schema: {
        tags,
        body: Type.Array(RunCreateStatelessSchema, { minItems: 1, maxItems: MAX_BATCH }),
        response: { 200: Type.Array(RunSchema), ...errors },
      },
    },
    async (request) => {
      // Refuse the whole batch before creating anything: no half-created batches.
      request.body.forEach((item, index) => {
        if (item.input != null && item.command != null) throw invalidField(["body", index, "command"], "give either input or command, not both");
      });
      const created: RunRow[] = [];
      for (const item of request.body) created.push(await runs.create(null, item, { onDisconnect: "continue" }));
      return created.map(toRun);
    },
  );

  app.post(
    "/runs/cancel",
    {
      schema: {
        tags,
        body: RunsCancelSchema,
        querystring: Type.Object({ action: Type.Optional(Type.Union([Type.Literal("interrupt"), Type.Literal("rollback")])) }),
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      const { status, thread_id, run_ids } = request.body;
      await runs.cancelMany({ runIds: run_ids, threadId: thread_id, status }, request.query.action ?? "interrupt");
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/runs/:run_id",
    { schema: { hide: true, params: Type.Object({ run_id: Type.String({ format: "uuid" }) }), response: { 200: RunSchema, ...errors } } },
    async (request) => toRun(await runs.get(undefined, request.params.run_id)),
  );

  app.get("/runs/:run_id/stream", { schema: { hide: true, params: Type.Object({ run_id: Type.String({ format: "uuid" }) }) } }, async (request, reply) => {
    const run = await runs.get(undefined, request.params.run_id);
    await streamRun(request, reply, {
      db: deps.db,
      streams: deps.streams,
      run,
      runPath: runPath(run),
      lastEventId: parseLastEventId(request.headers["last-event-id"]),
      fromStart: false,
      heartbeatMs: deps.heartbeatMs,
    });
  });
}

export { AnyValue };
