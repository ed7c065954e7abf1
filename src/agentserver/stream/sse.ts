// The SSE writer is shared with the control plane, so it lives in http/sse.ts. This alias
// serves the importers not yet pointed there (server.ts, stream/thread-stream-routes.ts,
// runs/stream-response.ts); new code imports it from http/sse.ts.
export { endOpenStreams, SseWriter, type SseOptions } from "../../http/sse.ts";
