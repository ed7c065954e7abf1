/**
 * JSON-RPC 2.0 envelopes, shared by the MCP and A2A endpoints. Neither protocol needs
 * more of JSON-RPC than this: one request per body, an id echoed back, a result or an
 * error with one of the standard codes (or a protocol's own, in the -32000 range).
 */

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

export type RpcId = string | number | null;

export interface RpcRequest {
  id: RpcId;
  /** False for a notification (no `id`): it gets no answer. */
  expectsAnswer: boolean;
  method: string;
  params: Record<string, unknown>;
}

/** A refusal answered as a JSON-RPC error, with the HTTP status it goes out with. */
export class RpcFault extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly httpStatus = 200,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcFault";
  }
}

export const invalidParams = (message: string, httpStatus = 200) => new RpcFault(INVALID_PARAMS, message, httpStatus);

export function rpcResult(id: RpcId, result: unknown) {
  return { jsonrpc: "2.0" as const, id, result };
}

export function rpcError(id: RpcId, fault: Pick<RpcFault, "code" | "message" | "data">) {
  const error: Record<string, unknown> = { code: fault.code, message: fault.message };
  if (fault.data !== undefined) error.data = fault.data;
  return { jsonrpc: "2.0" as const, id, error };
}

/** Whether a parsed body is a JSON-RPC response (a client answering a server request): it carries `result` or `error` and no `method`. */
export function isRpcResponse(body: unknown): boolean {
  return isObject(body) && body.jsonrpc === "2.0" && !("method" in body) && ("result" in body || "error" in body);
}

/**
 * Reads one JSON-RPC request or notification from a parsed body; anything else is an
 * "Invalid Request" fault (batches included: neither protocol's current revision has them).
 */
export function readRequest(body: unknown, invalidStatus = 200): RpcRequest {
  if (Array.isArray(body))
    throw new RpcFault(INVALID_REQUEST, "Invalid Request: batches are not supported; send one JSON-RPC request per HTTP request", invalidStatus);
  if (!isObject(body)) throw new RpcFault(INVALID_REQUEST, "Invalid Request: the body must be a JSON-RPC 2.0 request object", invalidStatus);
  if (body.jsonrpc !== "2.0") throw new RpcFault(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', invalidStatus);
  if (typeof body.method !== "string" || body.method.length === 0)
    throw new RpcFault(INVALID_REQUEST, 'Invalid Request: "method" must be a string', invalidStatus);
  const hasId = "id" in body;
  const id = body.id;
  if (hasId && id !== null && typeof id !== "string" && !(typeof id === "number" && Number.isFinite(id))) {
    throw new RpcFault(INVALID_REQUEST, 'Invalid Request: "id" must be a string or a number', invalidStatus);
  }
  const params = body.params;
  if (params !== undefined && !isObject(params)) throw new RpcFault(INVALID_PARAMS, 'Invalid params: "params" must be an object', invalidStatus);
  return { id: hasId ? (id as RpcId) : null, expectsAnswer: hasId, method: body.method, params: (params as Record<string, unknown> | undefined) ?? {} };
}

/** The id of a body that could not be read as a request, when it has a usable one (errors echo it). */
export function idOf(body: unknown): RpcId {
  if (!isObject(body)) return null;
  const id = body.id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
