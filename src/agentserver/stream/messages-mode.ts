import { toWire } from "../serialize.ts";
import type { Emit } from "./modes.ts";

interface StreamEventLike {
  event: string;
  run_id?: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  data?: { chunk?: unknown; output?: unknown };
}

interface MessageLike {
  id?: string;
  concat?: (other: unknown) => MessageLike;
}

/**
 * The API's `messages` mode: whole messages as they grow. For every chat-model
 * message it sends `messages/metadata` once, `messages/partial` with the text so far on
 * each token, and `messages/complete` when the model finishes.
 */
export class MessagesModeTracker {
  private readonly messages = new Map<string, MessageLike>();

  constructor(private readonly emit: Emit) {}

  handle(event: StreamEventLike): void {
    if (event.tags?.includes("nostream")) return;
    if (event.event === "on_chat_model_stream") {
      const chunk = event.data?.chunk as MessageLike | undefined;
      if (!chunk) return;
      const id = chunk.id ?? event.run_id ?? "message";
      const seen = this.messages.get(id);
      if (!seen) {
        this.emit("messages/metadata", { [id]: { metadata: event.metadata ?? {} } });
        this.messages.set(id, chunk);
      } else {
        this.messages.set(id, typeof seen.concat === "function" ? seen.concat(chunk) : chunk);
      }
      this.emit("messages/partial", [toWire(this.messages.get(id))]);
    } else if (event.event === "on_chat_model_end") {
      const output = event.data?.output as MessageLike | undefined;
      if (!output) return;
      const id = output.id ?? event.run_id ?? "message";
      if (!this.messages.has(id)) this.emit("messages/metadata", { [id]: { metadata: event.metadata ?? {} } });
      this.messages.set(id, output);
      this.emit("messages/complete", [toWire(output)]);
    }
  }
}
