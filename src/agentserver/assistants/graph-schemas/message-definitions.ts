import type { JsonSchema } from "./type-schema.ts";

/**
 * The `BaseMessage` definition as the vendor's dev server writes it (facts from its
 * schema tests): a `oneOf` over one definition per concrete LangChain message class,
 * each under its bare class name, and a description beginning "Base class for all
 * types of messages". Studio builds its message inputs from these definitions. Each
 * class is described by the dict a client sends and receives on the wire (its `type`
 * fixed), not by the class's internals.
 */
const ANY_OBJECT: JsonSchema = { type: "object", additionalProperties: true };

const CONTENT: JsonSchema = {
  anyOf: [{ type: "string" }, { type: "array", items: ANY_OBJECT }],
  description: "The text, or a list of content blocks (text, image, ...).",
};

/** A message class's wire dict; `type` undefined: any type (a chunk of any class). */
function messageClass(type: string | undefined, description: string, extra: Record<string, JsonSchema> = {}, required: string[] = []): JsonSchema {
  return {
    type: "object",
    description,
    properties: {
      type: type === undefined ? { type: "string" } : { type: "string", const: type },
      content: CONTENT,
      id: { type: "string" },
      name: { type: "string" },
      additional_kwargs: ANY_OBJECT,
      response_metadata: ANY_OBJECT,
      ...extra,
    },
    required: ["content", ...required],
    additionalProperties: true,
  };
}

const TOOL_CALL: JsonSchema = {
  type: "object",
  properties: { name: { type: "string" }, args: ANY_OBJECT, id: { type: "string" }, type: { type: "string", const: "tool_call" } },
  required: ["name", "args"],
};

const CLASSES: Record<string, JsonSchema> = {
  AIMessage: messageClass("ai", "A message from the model.", {
    tool_calls: { type: "array", items: TOOL_CALL },
    invalid_tool_calls: { type: "array", items: ANY_OBJECT },
    usage_metadata: ANY_OBJECT,
  }),
  BaseMessageChunk: messageClass(undefined, "A part of a message streamed by a model."),
  ChatMessage: messageClass("generic", "A message with an arbitrary speaker role.", { role: { type: "string" } }, ["role"]),
  FunctionMessage: messageClass("function", "The result of a function call (legacy tool calling).", {}, ["name"]),
  HumanMessage: messageClass("human", "A message from the user."),
  RemoveMessage: messageClass("remove", "Removes the message with this id from the state.", {}, ["id"]),
  SystemMessage: messageClass("system", "Instructions for the model."),
  ToolMessage: messageClass(
    "tool",
    "The result of a tool call.",
    { tool_call_id: { type: "string" }, status: { type: "string", enum: ["success", "error"] }, artifact: {} },
    ["tool_call_id"],
  ),
};

/** The definitions a schema that refers to `#/definitions/BaseMessage` carries. */
export const MESSAGE_DEFINITIONS: Record<string, JsonSchema> = {
  BaseMessage: {
    description: "Base class for all types of messages in a conversation: one of the message classes below, as sent on the wire.",
    oneOf: Object.keys(CLASSES).map((name) => ({ $ref: `#/definitions/${name}` })),
  },
  ...CLASSES,
};
