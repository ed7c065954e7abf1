import type { OwnApiRefusal } from "../own-api.ts";
import { INTERNAL_ERROR, INVALID_PARAMS, RpcFault } from "./envelope.ts";

/**
 * A REST route's refusal, met while serving a JSON-RPC call, as a JSON-RPC error: a 422
 * (or 400) is Invalid params, naming the field; 401 and 403 keep their HTTP status (the
 * caller's credentials did not reach what it asked for); anything else is an internal
 * error carrying the route's status and detail.
 */
export function refusalFault(refusal: OwnApiRefusal, invalidStatus = 200): RpcFault {
  if (refusal.status === 422 || refusal.status === 400)
    return new RpcFault(INVALID_PARAMS, `Invalid params: ${refusal.detail}`, invalidStatus, { status: refusal.status });
  const status = refusal.status === 401 || refusal.status === 403 ? refusal.status : 200;
  return new RpcFault(INTERNAL_ERROR, refusal.detail, status, { status: refusal.status });
}
