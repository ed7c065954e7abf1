import type { FastifyReply, FastifyRequest } from "fastify";
import type { HttpApp } from "../../http/server.ts";
import { Type } from "@sinclair/typebox";
import type { Database } from "../../storage/database.ts";
import { QueryBoolean, parseQueryBoolean } from "../../http/query.ts";
import type { RunStreamReader } from "../stream/run-streams.ts";
import { toRun, type RunRow } from "./repository.ts";
import { AnyValue, CancelQuery, JoinStreamQuery, ListRunsQuery, RunCreateStatefulSchema, RunIdParams, RunSchema, ThreadIdParams } from "./schemas.ts";
import { cancelOnDisconnect, clientGone, errorResponses, sseResponse } from "../route-helpers.ts";
import type { RunService } from "./service.ts";
import { parseLastEventId, streamRun } from "./stream-response.ts";
import { createAndWaitResponse } from "./wait-response.ts";

export interface RunRouteDeps {
  runs: RunService;
  streams: RunStreamReader;
  db: Database;
  heartbeatMs?: number;
}

const errors = errorResponses(404, 409, 422);
const tags = ["Thread Runs"];

/** Runs on a thread: create, stream, wait, list, get, delete, join, join stream, cancel. */
export function registerThreadRunRoutes(app: HttpApp, deps: RunRouteDeps): void {
  const { runs } = deps;
  const runPath = (run: RunRow) => `/threads/${run.thread_id}/runs/${run.run_id}`;

  app.post(
    "/threads/:thread_id/runs",
    { schema: { tags, params: ThreadIdParams, body: RunCreateStatefulSchema, response: { 200: RunSchema, ...errors } } },
    async (request, reply) => {
      const run = await runs.create(request.params.thread_id, request.body, { onDisconnect: "continue" });
      reply.header("Content-Location", runPath(run));
      return toRun(run);
    },
  );

  app.post(
    "/threads/:thread_id/runs/stream",
    { schema: { tags, params: ThreadIdParams, body: RunCreateStatefulSchema, response: { ...sseResponse, ...errors } } },
    async (request, reply) => {
      const run = await runs.create(request.params.thread_id, request.body, { onDisconnect: "continue" });
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

  app.post(
    "/threads/:thread_id/runs/wait",
    { schema: { tags, params: ThreadIdParams, body: RunCreateStatefulSchema, response: { 200: AnyValue, ...errors } } },
    async (request, reply) => {
      return createAndWaitResponse(
        request,
        reply,
        runs,
        { threadId: request.params.thread_id, body: request.body, defaults: { onDisconnect: "continue" } },
        runPath,
      );
    },
  );

  app.get(
    "/threads/:thread_id/runs",
    { schema: { tags, params: ThreadIdParams, querystring: ListRunsQuery, response: { 200: Type.Array(RunSchema), ...errors } } },
    async (request) => {
      const { limit = 10, offset = 0, status } = request.query;
      return (await runs.list(request.params.thread_id, { limit, offset, status })).map(toRun);
    },
  );

  app.get("/threads/:thread_id/runs/:run_id", { schema: { tags, params: RunIdParams, response: { 200: RunSchema, ...errors } } }, async (request) =>
    toRun(await runs.get(request.params.thread_id, request.params.run_id)),
  );

  app.delete("/threads/:thread_id/runs/:run_id", { schema: { tags, params: RunIdParams, response: { 200: AnyValue, ...errors } } }, async (request) => {
    await runs.delete(request.params.thread_id, request.params.run_id);
    return null;
  });

  app.get(
    "/threads/:thread_id/runs/:run_id/join",
    {
      schema: {
        tags,
        params: RunIdParams,
        querystring: Type.Object({ cancel_on_disconnect: Type.Optional(QueryBoolean({ default: false })) }),
        response: { 200: AnyValue, ...errors },
      },
    },
    async (request, reply) => {
      const run = await runs.get(request.params.thread_id, request.params.run_id);
      const gone = clientGone(reply);
      if (parseQueryBoolean(request.query.cancel_on_disconnect)) gone.addEventListener("abort", cancelOnDisconnect(runs, run, request.log));
      const result = await runs.waitForEnd(run.run_id, gone);
      return result.values ?? null;
    },
  );

  app.get(
    "/threads/:thread_id/runs/:run_id/stream",
    { schema: { tags, params: RunIdParams, querystring: JoinStreamQuery, response: { ...sseResponse, ...errors } } },
    async (request, reply) => {
      const run = await runs.get(request.params.thread_id, request.params.run_id);
      const modes = request.query.stream_mode;
      await streamRun(request, reply, {
        db: deps.db,
        streams: deps.streams,
        run,
        runPath: runPath(run),
        lastEventId: parseLastEventId(request.headers["last-event-id"]),
        fromStart: false,
        modes: modes === undefined || modes === "" ? undefined : Array.isArray(modes) ? modes : [modes],
        heartbeatMs: deps.heartbeatMs,
        onDisconnect: parseQueryBoolean(request.query.cancel_on_disconnect) ? cancelOnDisconnect(runs, run, request.log) : undefined,
      });
    },
  );

  app.post(
    "/threads/:thread_id/runs/:run_id/cancel",
    { schema: { tags, params: RunIdParams, querystring: CancelQuery, response: { 200: AnyValue, ...errors } } },
    async (request) => {
      const { action = "interrupt" } = request.query;
      const wait = parseQueryBoolean(request.query.wait);
      await runs.cancel(request.params.thread_id, request.params.run_id, { wait, action });
      return null;
    },
  );
}

export type { FastifyReply, FastifyRequest };
