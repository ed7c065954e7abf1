import { Type } from "@sinclair/typebox";
import { invalidField, notFound } from "../../http/errors.ts";
import { errorResponses, sseResponse } from "../route-helpers.ts";
import type { StreamBroker } from "./broker.ts";
import { wireEventId } from "./event-ids.ts";
import { FellBehind } from "./pull-queue.ts";
import { SseWriter } from "../../http/sse.ts";
import { followThreadRuns, type ThreadRunFeed } from "./thread-follow.ts";
import type { HttpApp } from "../../http/server.ts";

export interface ThreadStreamDeps {
  broker: StreamBroker;
  runFeed: ThreadRunFeed;
  threadExists(threadId: string): Promise<boolean>;
  heartbeatMs?: number;
}

const THREAD_STREAM_MODES = ["lifecycle", "run_modes", "state_update"] as const;
const ModeList = Type.Union([
  Type.Union(THREAD_STREAM_MODES.map((m) => Type.Literal(m))),
  Type.Array(Type.Union(THREAD_STREAM_MODES.map((m) => Type.Literal(m)))),
]);

/**
 * GET /threads/{thread_id}/stream: the output of every run executed on the thread,
 * one after another, for as long as the client stays, wherever the run executes (runs
 * of other processes come through the relay). Events are live: there is no replay
 * across runs yet, so a Last-Event-ID is refused rather than ignored.
 */
export function registerThreadStreamRoutes(app: HttpApp, deps: ThreadStreamDeps): void {
  app.get(
    "/threads/:thread_id/stream",
    {
      schema: {
        tags: ["Threads"],
        params: Type.Object({ thread_id: Type.String({ format: "uuid" }) }),
        querystring: Type.Object({ stream_modes: Type.Optional(ModeList), stream_mode: Type.Optional(ModeList) }),
        response: { ...sseResponse, ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const { thread_id: threadId } = request.params;
      const requested = request.query.stream_modes ?? request.query.stream_mode ?? "run_modes";
      const modes = Array.isArray(requested) ? requested : [requested];
      const unsupported = modes.filter((m) => m !== "run_modes");
      if (unsupported.length) throw invalidField(["query", "stream_modes"], `${unsupported.join(", ")} not supported yet; use run_modes`);
      const lastEventId = request.headers["last-event-id"];
      if (lastEventId !== undefined && lastEventId !== "") {
        throw invalidField(["header", "Last-Event-ID"], "resuming a thread stream is not supported yet; join a run's stream to resume");
      }
      if (!(await deps.threadExists(threadId))) throw notFound(`Thread ${threadId} not found`);

      const sse = new SseWriter(request, reply, { heartbeatMs: deps.heartbeatMs });
      const events = deps.broker.joinThread(threadId, sse.signal);
      const stopFollowing = followThreadRuns(deps.runFeed, deps.broker, threadId).catch((error) => {
        request.log.warn({ err: error, thread_id: threadId }, "thread stream cannot follow runs of other processes");
        return () => undefined;
      });
      let last = "none";
      try {
        // Over when the client leaves, shutdown ends every open stream, or the client
        // reads too slowly (decision 0027): then an `error` event names the last event sent.
        for await (const { runId, event } of events) {
          last = `${runId}:${wireEventId(event.id)}`;
          await sse.send(event.event, event.data, last);
        }
      } catch (error) {
        if (!(error instanceof FellBehind)) throw error;
        await sse.send(
          "error",
          error.payload(`the stream stops after event ${last}; open the thread stream again for live events, and join a run for its past output`),
        );
        sse.end();
      } finally {
        (await stopFollowing)();
      }
    },
  );
}
