import { authProvidersApi } from "./auth-providers.ts";
import { deploymentsApi } from "./deployments.ts";
import { integrationsApi } from "./integrations.ts";
import { listenersApi } from "./listeners.ts";
import { logsApi } from "./logs.ts";
import { revisionsApi } from "./revisions.ts";
import { workspacesApi } from "./workspaces.ts";
import { createTransport, type ClientOptions } from "./transport.ts";

/**
 * A typed client of the control-plane API (what `slipway` commands use). Its request and
 * response types are the server's own schemas (src/controlplane/<group>/schemas.ts).
 *
 * Errors: `ControlPlaneError` (status, the server's `detail`, field problems of a 422) or
 * `ConnectionError` (no answer). Retries: calls that are safe to repeat (GET, PUT, DELETE,
 * and the few POST/PATCH calls marked so in each group) are retried on network errors,
 * 429 and 5xx with backoff and jitter, honouring Retry-After; the others only on 429,
 * which the server answers before doing anything.
 *
 * @example
 *   const client = createControlPlaneClient({ url: "http://127.0.0.1:8080", apiKey, tenantId });
 *   const { resources } = await client.deployments.list({ name_contains: "agent" });
 */
export function createControlPlaneClient(options: ClientOptions) {
  const http = createTransport(options);
  return {
    baseUrl: http.baseUrl,
    deployments: deploymentsApi(http),
    revisions: revisionsApi(http),
    logs: logsApi(http),
    listeners: listenersApi(http),
    integrations: integrationsApi(http),
    authProviders: authProvidersApi(http),
    workspaces: workspacesApi(http),
  };
}

export type ControlPlaneClient = ReturnType<typeof createControlPlaneClient>;
export type { ClientOptions, RetryEvent } from "./transport.ts";
export { ConnectionError, ControlPlaneError, fieldOf, type ValidationProblem } from "./errors.ts";
export type { LogEntry, LogType } from "./logs.ts";
