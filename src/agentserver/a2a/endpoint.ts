import type { FastifyReply, FastifyRequest } from "fastify";
import { SseWriter } from "../../http/sse.ts";
import { isTerminal } from "../run-statuses.ts";
import type { RunStatus } from "../runs/schemas.ts";
import { OwnApiRefusal, ownSseEvents, type OwnApi } from "../own-api.ts";
import {
  INTERNAL_ERROR,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  PARSE_ERROR,
  RpcFault,
  idOf,
  readRequest,
  rpcError,
  rpcResult,
  type RpcId,
} from "../jsonrpc/envelope.ts";
import { refusalFault } from "../jsonrpc/refusal.ts";
import { graphInput, readMessage, type IncomingMessage } from "./input.ts";
import { artifactOf, task, taskState } from "./tasks.ts";
import { CONTENT_TYPE_NOT_SUPPORTED, TASK_NOT_CANCELABLE, TASK_NOT_FOUND, type Task } from "./wire.ts";

export interface A2aDeps {
  api: OwnApi;
  heartbeatMs: number;
}

interface AssistantRef {
  assistant_id: string;
  graph_id: string;
}
interface RunRef {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  status: RunStatus;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Codes answered with HTTP 400, as the vendor's server answers bad JSON-RPC and bad params. */
const BAD_REQUEST_CODES = new Set([PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, CONTENT_TYPE_NOT_SUPPORTED]);

/**
 * `POST /a2a/{assistant_id}`: the A2A protocol's JSON-RPC binding (0.3 method names).
 * A context is a thread, a task is a run on it; everything goes through the REST
 * routes as the caller (own-api.ts), so auth and validation are theirs.
 */
export class A2aEndpoint {
  constructor(private readonly deps: A2aDeps) {}

  async post(request: FastifyRequest, reply: FastifyReply, assistantIdOrGraph: string): Promise<unknown> {
    const body = request.body;
    try {
      const message = readRequest(body, 400);
      if (!message.expectsAnswer) throw new RpcFault(INVALID_REQUEST, 'Invalid Request: A2A requests need an "id"', 400);
      const assistant = await this.assistant(request, assistantIdOrGraph);
      switch (message.method) {
        case "message/send":
          return reply.send(rpcResult(message.id, await this.send(request, assistant, message.params)));
        case "message/stream":
          return await this.stream(request, reply, assistant, message.id, message.params);
        case "tasks/get":
          return reply.send(rpcResult(message.id, await this.getTask(request, assistant, message.params)));
        case "tasks/cancel":
          return reply.send(rpcResult(message.id, await this.cancelTask(request, assistant, message.params)));
        default:
          throw new RpcFault(METHOD_NOT_FOUND, `Method not found: ${message.method} (served: message/send, message/stream, tasks/get, tasks/cancel)`);
      }
    } catch (error) {
      const fault = this.asFault(error, request);
      const status = fault.httpStatus === 200 && BAD_REQUEST_CODES.has(fault.code) ? 400 : fault.httpStatus;
      return reply.status(status).send(rpcError(idOf(body), fault));
    }
  }

  /** The assistant of the path; an unknown one is the protocol's not-found, with HTTP 404. */
  async assistant(request: FastifyRequest, idOrGraph: string): Promise<AssistantRef & { name?: string; description?: string | null; version?: number }> {
    try {
      return (await this.deps.api.json<AssistantRef>(request, "GET", `/assistants/${encodeURIComponent(idOrGraph)}`)).value;
    } catch (error) {
      if (error instanceof OwnApiRefusal && (error.status === 404 || error.status === 422)) {
        throw new RpcFault(TASK_NOT_FOUND, `Assistant ${idOrGraph} not found`, 404);
      }
      throw error;
    }
  }

  /** message/send: a run on the context's thread (created with the first message), waited for. */
  private async send(request: FastifyRequest, assistant: AssistantRef, params: Record<string, unknown>): Promise<Task> {
    const incoming = readMessage(params);
    const input = await this.inputOf(request, assistant, incoming);
    const { value, headers } = await this.deps.api.json<Record<string, unknown> | null>(request, "POST", `/threads/${incoming.contextId}/runs/wait`, {
      assistant_id: assistant.assistant_id,
      input,
      if_not_exists: "create",
    });
    const runId = runIdOf(headers);
    const failure = (value as { __error__?: { error?: string; message?: string } } | null)?.__error__;
    if (failure)
      return task(runId, incoming.contextId, "failed", { error: `${failure.error ?? "Error"}: ${failure.message ?? ""}`, history: [incoming.message] });
    const state = await this.stateOf(request, incoming.contextId, runId);
    return task(runId, incoming.contextId, state, { values: value, history: [incoming.message] });
  }

  /**
   * message/stream: the same run through the thread's stream route, answered as SSE:
   * the task (submitted), a working status, the answer as an artifact, a final status.
   */
  private async stream(request: FastifyRequest, reply: FastifyReply, assistant: AssistantRef, id: RpcId, params: Record<string, unknown>): Promise<void> {
    const incoming = readMessage(params);
    const input = await this.inputOf(request, assistant, incoming);
    const gone = new AbortController();
    const response = await this.deps.api.fetch(
      request,
      "POST",
      `/threads/${incoming.contextId}/runs/stream`,
      // The task outlives its stream: a client that leaves can still ask tasks/get.
      { assistant_id: assistant.assistant_id, input, if_not_exists: "create", stream_mode: ["values"], on_disconnect: "continue" },
      gone.signal,
    );
    if (!response.ok) {
      const text = await response.text();
      throw new OwnApiRefusal(response.status, detailOf(text));
    }
    const runId = runIdOf(response.headers);
    const contextId = incoming.contextId;
    const sse = new SseWriter(request, reply, { heartbeatMs: this.deps.heartbeatMs });
    sse.onClose(() => gone.abort());
    const emit = (result: unknown) => sse.send("message", rpcResult(id, result));
    try {
      await emit(task(runId, contextId, "submitted", { history: [incoming.message] }));
      await emit(statusUpdate(runId, contextId, "working", false));
      let values: unknown;
      let failure: string | undefined;
      for await (const { event, data } of ownSseEvents(response)) {
        if (event === "values") values = data;
        else if (event === "error") failure = `${(data as { error?: string }).error ?? "Error"}: ${(data as { message?: string }).message ?? ""}`;
      }
      if (sse.isClosed) return;
      const state = failure ? "failed" : await this.stateOf(request, contextId, runId);
      const artifact = state === "completed" || state === "input-required" ? artifactOf(runId, values) : undefined;
      if (artifact) await emit({ kind: "artifact-update", taskId: runId, contextId, artifact, append: false, lastChunk: true });
      const final = task(runId, contextId, state, { error: failure });
      await emit({ kind: "status-update", taskId: runId, contextId, status: final.status, final: true });
    } catch (error) {
      await sse.send("message", rpcError(id, this.asFault(error, request)));
    } finally {
      sse.end();
    }
  }

  /** tasks/get: the run's state, and the thread's current answer once it has one. */
  private async getTask(request: FastifyRequest, assistant: AssistantRef, params: Record<string, unknown>): Promise<Task> {
    const run = await this.run(request, assistant, params);
    const thread = await this.deps.api.json<{ status: string; values?: unknown }>(request, "GET", `/threads/${run.thread_id}`);
    return task(run.run_id, run.thread_id, taskState(run.status, thread.value.status), { values: thread.value.values });
  }

  /** tasks/cancel: cancels the run on the server and answers once it has stopped. */
  private async cancelTask(request: FastifyRequest, assistant: AssistantRef, params: Record<string, unknown>): Promise<Task> {
    const run = await this.run(request, assistant, params);
    const notCancelable = () => new RpcFault(TASK_NOT_CANCELABLE, `Task ${run.run_id} cannot be canceled: it has already ended`);
    if (isTerminal(run.status)) throw notCancelable();
    try {
      await this.deps.api.json(request, "POST", `/threads/${run.thread_id}/runs/${run.run_id}/cancel?wait=true`);
    } catch (error) {
      if (error instanceof OwnApiRefusal && error.status === 409) throw notCancelable();
      throw error;
    }
    const state = await this.stateOf(request, run.thread_id, run.run_id);
    return task(run.run_id, run.thread_id, state);
  }

  /** The run a task id names, if it ran this assistant (and on the context given, if any); else task not found. */
  private async run(request: FastifyRequest, assistant: AssistantRef, params: Record<string, unknown>): Promise<RunRef> {
    const { id, contextId } = params;
    if (typeof id !== "string") throw new RpcFault(INVALID_PARAMS, 'Invalid params: "id" must be the task id');
    if (contextId !== undefined && typeof contextId !== "string") throw new RpcFault(INVALID_PARAMS, 'Invalid params: "contextId" must be a string');
    const notFound = new RpcFault(TASK_NOT_FOUND, `Task ${id} not found`);
    if (!UUID.test(id)) throw notFound;
    let run: RunRef;
    try {
      run = (await this.deps.api.json<RunRef>(request, "GET", `/runs/${id}`)).value;
    } catch (error) {
      if (error instanceof OwnApiRefusal && error.status === 404) throw notFound;
      throw error;
    }
    if (run.assistant_id !== assistant.assistant_id || (contextId !== undefined && contextId !== run.thread_id)) throw notFound;
    return run;
  }

  private async stateOf(request: FastifyRequest, threadId: string, runId: string) {
    const { api } = this.deps;
    const [run, thread] = await Promise.all([
      api.json<RunRef>(request, "GET", `/threads/${threadId}/runs/${runId}`),
      api.json<{ status: string }>(request, "GET", `/threads/${threadId}`),
    ]);
    return taskState(run.value.status, thread.value.status);
  }

  /** The graph input; text needs a graph that takes `messages`, which its input schema tells. */
  private async inputOf(request: FastifyRequest, assistant: AssistantRef, incoming: IncomingMessage): Promise<Record<string, unknown>> {
    if (incoming.text === undefined) return graphInput(incoming, undefined, assistant.assistant_id);
    const { value } = await this.deps.api.json<{ input_schema?: unknown }>(request, "GET", `/assistants/${assistant.assistant_id}/schemas`);
    return graphInput(incoming, value.input_schema, assistant.assistant_id);
  }

  private asFault(error: unknown, request: FastifyRequest): RpcFault {
    if (error instanceof RpcFault) return error;
    if (error instanceof OwnApiRefusal) return refusalFault(error);
    request.log.error({ err: error }, "A2A request failed");
    return new RpcFault(INTERNAL_ERROR, "Internal error", 500);
  }
}

function statusUpdate(taskId: string, contextId: string, state: "working", final: boolean) {
  return { kind: "status-update", taskId, contextId, status: { state, timestamp: new Date().toISOString() }, final };
}

/** The run a run route created, from its Content-Location (`/threads/<thread>/runs/<run>`). */
function runIdOf(headers: Headers): string {
  const location = headers.get("content-location") ?? "";
  const runId = location.split("/").pop();
  if (!runId || !UUID.test(runId)) throw new Error(`the run route answered without a run location (${location})`);
  return runId;
}

function detailOf(text: string): string {
  try {
    const detail = (JSON.parse(text) as { detail?: unknown }).detail;
    return typeof detail === "string" ? detail : text;
  } catch {
    return text;
  }
}
