import { RpcFault, invalidParams, isObject } from "../jsonrpc/envelope.ts";
import { CONTENT_TYPE_NOT_SUPPORTED, type A2aMessage, type Part } from "./wire.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface IncomingMessage {
  message: A2aMessage;
  /** The thread: the message's contextId, or a new one. */
  contextId: string;
  text: string | undefined;
  data: Record<string, unknown>;
}

/**
 * Reads `params.message` of message/send and message/stream. Text parts become one
 * human message (their texts joined by new lines); data parts are merged into the
 * graph's input; file parts are refused (the vendor's server takes none either).
 */
export function readMessage(params: Record<string, unknown>): IncomingMessage {
  const message = params.message;
  if (!isObject(message)) throw invalidParams('Invalid params: "message" must be an object');
  if (message.role !== "user" && message.role !== "agent") throw invalidParams('Invalid params: "message.role" must be "user" or "agent"');
  if (typeof message.messageId !== "string" || !message.messageId) throw invalidParams('Invalid params: "message.messageId" must be a string');
  if (!Array.isArray(message.parts) || message.parts.length === 0) throw invalidParams('Invalid params: "message.parts" must be a non-empty list');
  const contextId = message.contextId;
  if (contextId !== undefined && (typeof contextId !== "string" || !UUID.test(contextId))) {
    throw invalidParams('Invalid params: "message.contextId" must be a UUID: it is the id of the thread the conversation runs on');
  }
  const texts: string[] = [];
  const data: Record<string, unknown> = {};
  const parts: Part[] = [];
  message.parts.forEach((part: unknown, index: number) => {
    if (!isObject(part)) throw invalidParams(`Invalid params: message.parts[${index}] must be an object`);
    if (part.kind === "text") {
      if (typeof part.text !== "string") throw invalidParams(`Invalid params: message.parts[${index}].text must be a string`);
      texts.push(part.text);
      parts.push({ kind: "text", text: part.text });
    } else if (part.kind === "data") {
      if (!isObject(part.data)) throw invalidParams(`Invalid params: message.parts[${index}].data must be an object`);
      Object.assign(data, part.data);
      parts.push({ kind: "data", data: part.data });
    } else if (part.kind === "file") {
      throw new RpcFault(
        CONTENT_TYPE_NOT_SUPPORTED,
        `Content type not supported: message.parts[${index}] is a file part; this server takes text and data parts`,
      );
    } else {
      throw invalidParams(`Invalid params: message.parts[${index}].kind must be "text" or "data"`);
    }
  });
  const id = contextId ?? crypto.randomUUID();
  return {
    message: { kind: "message", role: message.role, messageId: message.messageId, parts, contextId: id },
    contextId: id,
    text: texts.length ? texts.join("\n") : undefined,
    data,
  };
}

/**
 * The graph input of a message: its data parts, plus, when it has text, a human (or,
 * from role "agent", an AI) message appended to `messages`, which the graph's input
 * schema must then have (a graph built on MessagesAnnotation / MessagesState has).
 */
export function graphInput(incoming: IncomingMessage, inputSchema: unknown, assistantId: string): Record<string, unknown> {
  const input: Record<string, unknown> = { ...incoming.data };
  if (incoming.text === undefined) return input;
  const properties = isObject(inputSchema) && isObject(inputSchema.properties) ? inputSchema.properties : undefined;
  // A graph whose input schema is not known (none could be read) is given the message anyway.
  if (properties && !("messages" in properties)) {
    throw invalidParams(
      `Invalid params: assistant ${assistantId} takes no "messages" in its input, so text parts have nowhere to go; send its input as a data part instead`,
    );
  }
  const type = incoming.message.role === "agent" ? "ai" : "human";
  const given = Array.isArray(input.messages) ? input.messages : [];
  input.messages = [...given, { type, content: incoming.text, id: incoming.message.messageId }];
  return input;
}
