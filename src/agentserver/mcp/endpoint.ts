import type { FastifyReply, FastifyRequest } from "fastify";
import type { Database } from "../../storage/database.ts";
import { SseWriter } from "../../http/sse.ts";
import { clientGone } from "../route-helpers.ts";
import { OwnApiRefusal, type OwnApi } from "../own-api.ts";
import {
  INTERNAL_ERROR,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  RpcFault,
  idOf,
  invalidParams,
  isObject,
  isRpcResponse,
  readRequest,
  rpcError,
  rpcResult,
  type RpcRequest,
} from "../jsonrpc/envelope.ts";
import { refusalFault } from "../jsonrpc/refusal.ts";
import { deleteMcpSession, insertMcpSession, touchMcpSession } from "./session-repository.ts";
import { callTool, listTools } from "./tools.ts";

/** Protocol revisions this endpoint speaks, newest first: the first is offered to a client asking for another. */
export const MCP_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/** MCP's code for a session that does not exist (the reference SDK's, with HTTP 404). */
const SESSION_NOT_FOUND = -32001;

export interface McpDeps {
  db: Database;
  api: OwnApi;
  version: string;
  heartbeatMs: number;
}

/**
 * The MCP endpoint (streamable HTTP transport): each POST carries one JSON-RPC message;
 * requests are answered with JSON, or with an SSE stream when the client asked for
 * progress of a tool call. Sessions: `initialize` opens one (Mcp-Session-Id); a request
 * naming one that ended gets 404; a request naming none is served as the vendor's
 * stateless server serves it.
 */
export class McpEndpoint {
  constructor(private readonly deps: McpDeps) {}

  async post(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const body = request.body;
    try {
      acceptsBoth(request.headers.accept);
      checkProtocolHeader(request.headers["mcp-protocol-version"]);
      // A client's answer or notification needs no reply: 202, as the transport says.
      if (isRpcResponse(body)) return reply.status(202).send();
      const message = readRequest(body, 400);
      if (message.method !== "initialize") await this.checkSession(sessionIdOf(request));
      if (!message.expectsAnswer) return reply.status(202).send();
      if (message.method === "tools/call" && progressTokenOf(message) !== undefined) return await this.streamCall(request, reply, message);
      const result = await this.answer(request, reply, message);
      return reply.send(rpcResult(message.id, result));
    } catch (error) {
      // The client left (its run was cancelled): nobody to answer, nothing to log.
      if (reply.raw.destroyed) return reply;
      const fault = asFault(error, request);
      return reply.status(fault.httpStatus).send(rpcError(idOf(body), fault));
    }
  }

  /** DELETE ends a session; without a known one it is 404, as on the vendor's (sessionless) server. */
  async delete(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const sessionId = sessionIdOf(request);
    if (sessionId && UUID.test(sessionId) && (await deleteMcpSession(this.deps.db, sessionId))) return reply.status(204).send();
    return reply.status(404).send(rpcError(null, { code: SESSION_NOT_FOUND, message: "Session not found" }));
  }

  private async checkSession(sessionId: string | undefined): Promise<void> {
    if (sessionId === undefined) return;
    if (!UUID.test(sessionId) || !(await touchMcpSession(this.deps.db, sessionId))) {
      throw new RpcFault(SESSION_NOT_FOUND, "Session not found: start a new one with initialize", 404);
    }
  }

  private async answer(request: FastifyRequest, reply: FastifyReply, message: RpcRequest): Promise<unknown> {
    const { api } = this.deps;
    switch (message.method) {
      case "initialize":
        return this.initialize(reply, message.params);
      case "ping":
        return {};
      case "tools/list":
        return { tools: await listTools(api, request) };
      case "tools/call": {
        const { name, args } = toolCallParams(message.params);
        return callTool(api, request, name, args, async () => {}, clientGone(reply));
      }
      default:
        throw new RpcFault(METHOD_NOT_FOUND, `Method not found: ${message.method}`);
    }
  }

  private async initialize(reply: FastifyReply, params: Record<string, unknown>): Promise<unknown> {
    const asked = params.protocolVersion;
    if (typeof asked !== "string") throw invalidParams('Invalid params: "protocolVersion" must be a string');
    const protocolVersion = MCP_PROTOCOL_VERSIONS.includes(asked) ? asked : MCP_PROTOCOL_VERSIONS[0]!;
    const sessionId = crypto.randomUUID();
    await insertMcpSession(this.deps.db, sessionId, protocolVersion);
    reply.header("mcp-session-id", sessionId);
    return {
      protocolVersion,
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: "slipway-agent-server", version: this.deps.version },
      instructions:
        "Each tool is an assistant of this LangGraph agent server; calling it runs the assistant's graph once, without a thread, and returns its output.",
    };
  }

  /** tools/call with a progress token: an SSE stream of progress notifications, then the result. */
  private async streamCall(request: FastifyRequest, reply: FastifyReply, message: RpcRequest): Promise<void> {
    const { name, args } = toolCallParams(message.params);
    const token = progressTokenOf(message);
    const sse = new SseWriter(request, reply, { heartbeatMs: this.deps.heartbeatMs });
    try {
      const result = await callTool(
        this.deps.api,
        request,
        name,
        args,
        (progress, text) =>
          sse.send("message", { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress, message: text } }),
        sse.signal,
      );
      await sse.send("message", rpcResult(message.id, result));
    } catch (error) {
      if (!sse.isClosed) await sse.send("message", rpcError(message.id, asFault(error, request)));
    } finally {
      sse.end();
    }
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function sessionIdOf(request: FastifyRequest): string | undefined {
  const value = request.headers["mcp-session-id"];
  return Array.isArray(value) ? value[0] : value;
}

/** The transport: a POST must accept both JSON and SSE (the vendor answers 400 otherwise). */
function acceptsBoth(accept: string | undefined): void {
  const types = (accept ?? "").split(",").map((part) => part.split(";")[0]!.trim().toLowerCase());
  const takes = (type: string) => types.includes(type) || types.includes("*/*");
  if (!takes("application/json") || !takes("text/event-stream")) {
    throw new RpcFault(INVALID_REQUEST, "Not Acceptable: the Accept header must list both application/json and text/event-stream", 400);
  }
}

function checkProtocolHeader(value: string | string[] | undefined): void {
  const version = Array.isArray(value) ? value[0] : value;
  if (version !== undefined && !MCP_PROTOCOL_VERSIONS.includes(version)) {
    throw new RpcFault(INVALID_REQUEST, `Unsupported MCP-Protocol-Version ${version} (supported: ${MCP_PROTOCOL_VERSIONS.join(", ")})`, 400);
  }
}

function toolCallParams(params: Record<string, unknown>): { name: string; args: Record<string, unknown> } {
  if (typeof params.name !== "string" || !params.name) throw invalidParams('Invalid params: "name" must name a tool');
  if (params.arguments !== undefined && !isObject(params.arguments)) throw invalidParams('Invalid params: "arguments" must be an object');
  return { name: params.name, args: (params.arguments as Record<string, unknown> | undefined) ?? {} };
}

function progressTokenOf(message: RpcRequest): string | number | undefined {
  const meta = message.params._meta;
  const token = isObject(meta) ? meta.progressToken : undefined;
  return typeof token === "string" || typeof token === "number" ? token : undefined;
}

/** What a failure becomes on the wire: a fault as it is; a route's refusal by its status; anything else an internal error, logged. */
function asFault(error: unknown, request: FastifyRequest): RpcFault {
  if (error instanceof RpcFault) return error;
  if (error instanceof OwnApiRefusal) return refusalFault(error);
  request.log.error({ err: error }, "MCP request failed");
  return new RpcFault(INTERNAL_ERROR, "Internal error", 500);
}
