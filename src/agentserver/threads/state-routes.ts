import { Type } from "@sinclair/typebox";
import { parseQueryBoolean } from "../../http/query.ts";
import {
  CheckpointParams,
  ErrorResponseSchema,
  HistoryBody,
  HistoryQuery,
  StateAtCheckpointBody,
  StatePatchSchema,
  StateQuery,
  StateUpdateResponseSchema,
  StateUpdateSchema,
  ThreadIdParams,
  ThreadStateSchema,
  ThreadStorageSchema,
} from "./schemas.ts";
import { projectState } from "./state.ts";
import type { ThreadStateService } from "./state-service.ts";
import type { HttpApp } from "../../http/server.ts";

const tags = ["Threads"];
const errors = { 404: ErrorResponseSchema, 409: ErrorResponseSchema, 422: ErrorResponseSchema };

/** Thread state and history: read through the thread's graph, update, patch metadata. */
export function registerThreadStateRoutes(app: HttpApp, state: ThreadStateService): void {
  app.get(
    "/threads/:thread_id/state",
    { schema: { tags, summary: "Get Thread State", params: ThreadIdParams, querystring: StateQuery, response: { 200: ThreadStateSchema, ...errors } } },
    async (request) => {
      const found = await state.get(request.params.thread_id, null, parseQueryBoolean(request.query.subgraphs));
      return projectState(found, request.query.select);
    },
  );

  app.post(
    "/threads/:thread_id/state",
    {
      schema: {
        tags,
        summary: "Update Thread State",
        params: ThreadIdParams,
        body: StateUpdateSchema,
        response: { 200: StateUpdateResponseSchema, ...errors },
      },
    },
    async (request) => state.update(request.params.thread_id, request.body),
  );

  app.patch(
    "/threads/:thread_id/state",
    {
      schema: {
        tags,
        summary: "Patch Thread State Metadata",
        description: "Merges metadata into the metadata of the thread's latest checkpoint (or the given one).",
        params: ThreadIdParams,
        body: StatePatchSchema,
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      await state.patchMetadata(request.params.thread_id, request.body);
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/threads/:thread_id/state/:checkpoint_id",
    {
      schema: {
        tags,
        summary: "Get Thread State At Checkpoint",
        params: CheckpointParams,
        querystring: StateQuery,
        response: { 200: ThreadStateSchema, ...errors },
      },
    },
    async (request) => {
      const { thread_id, checkpoint_id } = request.params;
      const found = await state.get(thread_id, { checkpoint_id }, parseQueryBoolean(request.query.subgraphs));
      return projectState(found, request.query.select);
    },
  );

  app.post(
    "/threads/:thread_id/state/checkpoint",
    {
      schema: {
        tags,
        summary: "Get Thread State At Checkpoint Post",
        params: ThreadIdParams,
        body: StateAtCheckpointBody,
        response: { 200: ThreadStateSchema, ...errors },
      },
    },
    async (request) => {
      const found = await state.get(request.params.thread_id, request.body.checkpoint, request.body.subgraphs ?? false);
      return projectState(found, request.body.select);
    },
  );

  app.get(
    "/threads/:thread_id/history",
    {
      schema: {
        tags,
        summary: "Get Thread History",
        params: ThreadIdParams,
        querystring: HistoryQuery,
        response: { 200: Type.Array(ThreadStateSchema), ...errors },
      },
    },
    async (request) => state.history(request.params.thread_id, { limit: request.query.limit ?? 10, before: request.query.before }),
  );

  app.post(
    "/threads/:thread_id/history",
    {
      schema: {
        tags,
        summary: "Get Thread History Post",
        params: ThreadIdParams,
        body: HistoryBody,
        response: { 200: Type.Array(ThreadStateSchema), ...errors },
      },
    },
    async (request) => {
      const { limit = 10, before, metadata, checkpoint, select } = request.body;
      const states = await state.history(request.params.thread_id, { limit, before, metadata, checkpoint });
      return states.map((s) => projectState(s, select));
    },
  );

  app.get(
    "/threads/:thread_id/storage",
    {
      schema: {
        tags,
        summary: "Get Thread Storage",
        params: ThreadIdParams,
        response: { 200: ThreadStorageSchema, 404: ErrorResponseSchema, 422: ErrorResponseSchema, 501: ErrorResponseSchema },
      },
    },
    async (request) => state.storage(request.params.thread_id),
  );
}
