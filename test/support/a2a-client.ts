import { Role, type Message, type Task } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from "@a2a-js/sdk/client";

/**
 * The official A2A client (@a2a-js/sdk) set up for Slipway's endpoint: its v0.3
 * compatibility on, so that the card's protocolVersion "0.3.0" selects the v0.3
 * JSON-RPC transport (message/send, tasks/get...), which the vendor's server speaks.
 */
export function a2aClientFactory(fetchImpl: typeof fetch): ClientFactory {
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } }),
    }),
  );
}

export function userMessage(text: string, contextId = ""): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId: "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

export const send = (client: Client, message: Message) =>
  client.sendMessage({ tenant: "", message, configuration: undefined, metadata: undefined }) as Promise<Task>;

/** The text of a task's artifacts. */
export const answerOf = (task: Task) =>
  task.artifacts.flatMap((artifact) => artifact.parts.map((part) => (part.content?.$case === "text" ? part.content.value : ""))).join("");

/** A fetch that adds a header to every request (the SDKs pass a Headers object or a record). */
export function fetchWithHeader(name: string, value: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set(name, value);
    return fetch(input, { ...init, headers });
  };
}
