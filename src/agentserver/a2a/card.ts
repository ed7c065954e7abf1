import type { FastifyRequest } from "fastify";
import { A2A_PROTOCOL_VERSION } from "./wire.ts";

interface CardAssistant {
  assistant_id: string;
  graph_id: string;
  name?: string;
  description?: string | null;
  version?: number;
}

/**
 * The A2A agent card (0.3) of one assistant. Its `url` is where the client reached this
 * server: behind `slipway up`'s router, the deployment's URL (X-Forwarded-Host, -Proto
 * and -Prefix, which the router sets); plus `http.mount_prefix`.
 */
export function agentCard(request: FastifyRequest, assistant: CardAssistant, mountPrefix: string): Record<string, unknown> {
  const url = `${publicOrigin(request)}${mountPrefix}/a2a/${assistant.assistant_id}`;
  const name = assistant.name || assistant.graph_id;
  const description = assistant.description || `LangGraph assistant ${name} (graph ${assistant.graph_id}) served by Slipway.`;
  return {
    protocolVersion: A2A_PROTOCOL_VERSION,
    name,
    description,
    url,
    preferredTransport: "JSONRPC",
    additionalInterfaces: [{ url, transport: "JSONRPC" }],
    version: String(assistant.version ?? 1),
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: [
      {
        id: `${assistant.graph_id}-main`,
        name,
        description,
        tags: ["langgraph", assistant.graph_id],
        inputModes: ["text/plain", "application/json"],
        outputModes: ["text/plain", "application/json"],
      },
    ],
  };
}

function publicOrigin(request: FastifyRequest): string {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.split(",")[0]?.trim();
  const proto = first(request.headers["x-forwarded-proto"]);
  const host = first(request.headers["x-forwarded-host"]) || request.headers.host || "localhost";
  const prefix = first(request.headers["x-forwarded-prefix"]) ?? "";
  const scheme = proto === "https" || proto === "http" ? proto : "http";
  return `${scheme}://${host}${prefix.replace(/\/$/, "")}`;
}
