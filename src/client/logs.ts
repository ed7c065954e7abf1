import type { LogsPage, LogsQueryBody, RevisionLogsQuery } from "../controlplane/logs/schemas.ts";
import { ConnectionError, ControlPlaneError } from "./errors.ts";
import { DEFAULT_RETRY, retryDelayMs } from "./retry.ts";
import { readServerSentEvents } from "./sse.ts";
import type { Transport } from "./transport.ts";

export type LogEntry = LogsPage["logs"][number];
export type LogType = "build" | "deploy";

/** A stream silent this long (not even a heartbeat, sent every 15 s) is taken for dead and reopened. */
const IDLE_MS = 45_000;

/** Build and deploy logs: pages (v2 GET, v1 POST with filters) and a live follow (server-sent events). */
export function logsApi(http: Transport) {
  const revisionPath = (deploymentId: string, revisionId: string) =>
    `/v2/deployments/${encodeURIComponent(deploymentId)}/revisions/${encodeURIComponent(revisionId)}`;
  const project = (deploymentId: string) => `/v1/projects/${encodeURIComponent(deploymentId)}`;
  // The v1 endpoints are POSTs that only read: safe to repeat.
  const v1 = (path: string, body: LogsQueryBody) => http.json<LogsPage>({ method: "POST", path, body, idempotent: true });

  return {
    page: (deploymentId: string, revisionId: string, query: Omit<RevisionLogsQuery, "follow"> = {}) =>
      http.json<LogsPage>({ method: "GET", path: `${revisionPath(deploymentId, revisionId)}/logs`, query: { ...query } }),
    buildLogs: (deploymentId: string, revisionId: string, body: LogsQueryBody = {}) =>
      v1(`${project(deploymentId)}/revisions/${encodeURIComponent(revisionId)}/build_logs`, body),
    deployLogs: (deploymentId: string, revisionId: string, body: LogsQueryBody = {}) =>
      v1(`${project(deploymentId)}/revisions/${encodeURIComponent(revisionId)}/deploy_logs`, body),
    deploymentDeployLogs: (deploymentId: string, body: LogsQueryBody = {}) => v1(`${project(deploymentId)}/deploy_logs`, body),

    /**
     * The log's lines as they are written, until the server ends the stream (the build is
     * over, or the revision no longer serves) or `signal` aborts. A broken or silent stream
     * is reopened after the last line seen (Last-Event-ID), a few times with backoff.
     */
    async *follow(
      deploymentId: string,
      revisionId: string,
      options: { type?: LogType; signal?: AbortSignal; afterId?: string } = {},
    ): AsyncGenerator<LogEntry> {
      let lastId = options.afterId;
      for (let failures = 0; ; ) {
        const idle = new AbortController();
        const signal = options.signal ? AbortSignal.any([options.signal, idle.signal]) : idle.signal;
        let timer: NodeJS.Timeout | undefined;
        const arm = () => {
          clearTimeout(timer);
          timer = setTimeout(() => idle.abort(new Error("the log stream went silent")), IDLE_MS);
        };
        try {
          const response = await http.open({
            method: "GET",
            path: `${revisionPath(deploymentId, revisionId)}/logs`,
            query: { type: options.type ?? "build", follow: true },
            headers: { accept: "text/event-stream", ...(lastId ? { "last-event-id": lastId } : {}) },
            signal,
            timeoutMs: null,
          });
          arm();
          for await (const event of readServerSentEvents(response.body!, arm)) {
            arm();
            if (event.event === "end") return;
            if (event.event === "error")
              throw new ControlPlaneError({ status: 500, body: safeJson(event.data), method: "GET", path: `${revisionPath(deploymentId, revisionId)}/logs` });
            if (event.event !== "log") continue;
            const entry = safeJson(event.data) as LogEntry;
            lastId = event.id ?? entry.id;
            failures = 0;
            yield entry;
          }
        } catch (error) {
          if (options.signal?.aborted) return;
          if (error instanceof ControlPlaneError) throw error;
          const delay = ++failures <= DEFAULT_RETRY.retries ? retryDelayMs(failures - 1, DEFAULT_RETRY) : undefined;
          if (delay === undefined) throw error instanceof ConnectionError ? error : new ConnectionError({ url: http.baseUrl, cause: error, write: false });
          await DEFAULT_RETRY.sleep(delay, options.signal).catch(() => undefined);
          if (options.signal?.aborted) return;
          continue;
        } finally {
          clearTimeout(timer);
        }
        // The server closed the stream without `end` (it is stopping): reopen it.
        if (options.signal?.aborted || ++failures > DEFAULT_RETRY.retries) return;
      }
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
