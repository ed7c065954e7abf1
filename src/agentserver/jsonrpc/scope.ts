import type { FastifyError } from "fastify";
import { isJsonSyntax } from "../../http/error-handler.ts";
import { SlipwayError } from "../../http/errors.ts";
import type { HttpApp } from "../../http/server.ts";
import { INVALID_PARAMS, PARSE_ERROR, rpcError } from "./envelope.ts";

/**
 * Registers JSON-RPC routes in a scope of their own, whose error handler answers what
 * goes wrong before a handler runs in JSON-RPC's terms instead of the REST routes'
 * `{"detail"}`: a body that is not JSON is a Parse error (-32700), one the input guard
 * refuses (a NUL character, nesting past the limit) is Invalid params (-32602); both
 * with HTTP 400. Everything else (a missing key: 401/403, a body too large: 413) goes
 * to the server's own handler.
 */
export function registerJsonRpcScope(app: HttpApp, register: (scope: HttpApp) => void): void {
  void app.register(async (scope) => {
    scope.setErrorHandler((error: FastifyError | SlipwayError, _request, reply) => {
      if (error instanceof SlipwayError && error.code === "invalid") {
        return reply.status(400).send(rpcError(null, { code: INVALID_PARAMS, message: `Invalid params: ${error.message}` }));
      }
      if (!(error instanceof SlipwayError) && (isJsonSyntax(error) || error.code === "FST_ERR_CTP_INVALID_JSON_LENGTH")) {
        return reply.status(400).send(rpcError(null, { code: PARSE_ERROR, message: `Parse error: ${error.message}` }));
      }
      throw error;
    });
    register(scope as HttpApp);
  });
}
