/**
 * Where an agent process listens, as the router calls it: a Unix socket (a named pipe
 * on Windows), as the pipeline's runtime starts them, or a loopback host and port.
 * `basePath` is the agent's http.mount_prefix ("" without one).
 */
export type AgentEndpoint =
  | { socketPath: string; host?: undefined; port?: undefined; basePath: string }
  | { socketPath?: undefined; host: string; port: number; basePath: string };

/** Reads the endpoint from `slipway agent`'s "listening" line: `{socket, base_path}` or `{url}`. */
export function endpointOfListening(event: { socket?: unknown; base_path?: unknown; url?: unknown }): AgentEndpoint | undefined {
  if (typeof event.socket === "string" && event.socket)
    return { socketPath: event.socket, basePath: typeof event.base_path === "string" ? event.base_path : "" };
  if (typeof event.url !== "string") return undefined;
  try {
    const url = new URL(event.url);
    if (url.protocol !== "http:" || !url.port) return undefined;
    return { host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port), basePath: url.pathname === "/" ? "" : url.pathname.replace(/\/$/, "") };
  } catch {
    return undefined;
  }
}

/** For logs and messages: `unix:<path>` or `http://host:port<base>`. */
export function describeEndpoint(endpoint: AgentEndpoint): string {
  if (endpoint.socketPath !== undefined) return `unix:${endpoint.socketPath}${endpoint.basePath ? ` (base path ${endpoint.basePath})` : ""}`;
  const host = endpoint.host.includes(":") ? `[${endpoint.host}]` : endpoint.host;
  return `http://${host}:${endpoint.port}${endpoint.basePath}`;
}
