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
 * The API's `messages` mode, as the vendor's JS server builds it: for every chat-model
 * message, `messages/metadata` once and `messages/partial` with the message so far on
 * each token; and `messages/complete` for each message (with an id) that first appears
 * in the state's `messages`, the input's included, from the graph's values chunks.
 */
export class MessagesModeTracker {
  private readonly messages = new Map<string, MessageLike>();
  private readonly completed = new Set<string>();

  constructor(private readonly emit: Emit) {}

  /** A values chunk of the run (or of a subgraph, when subgraphs are streamed). */
  values(state: unknown): void {
    if (!state || typeof state !== "object" || !("messages" in state)) return;
    const list = (state as { messages: unknown }).messages;
    const fresh: MessageLike[] = [];
    for (const message of (Array.isArray(list) ? list : [list]) as MessageLike[]) {
      if (!message?.id || this.completed.has(message.id)) continue;
      this.completed.add(message.id);
      fresh.push(message);
    }
    if (fresh.length) this.emit("messages/complete", toWire(fresh));
  }

  handle(event: StreamEventLike): void {
    if (event.event !== "on_chat_model_stream" || event.tags?.includes("nostream")) return;
    const chunk = event.data?.chunk as MessageLike | undefined;
    if (!chunk?.id) return;
    const seen = this.messages.get(chunk.id);
    if (!seen) {
      this.emit("messages/metadata", { [chunk.id]: { metadata: event.metadata ?? {} } });
      this.messages.set(chunk.id, chunk);
    } else {
      this.messages.set(chunk.id, typeof seen.concat === "function" ? seen.concat(chunk) : concatWire(seen, chunk));
    }
    this.emit("messages/partial", [toWire(this.messages.get(chunk.id))]);
  }
}

/**
 * Two chunks of one message already in wire form (a Python graph's, decision 0036): the
 * text so far grows; other fields take the newer chunk's.
 */
function concatWire(seen: MessageLike, chunk: MessageLike): MessageLike {
  const before = (seen as { content?: unknown }).content;
  const after = (chunk as { content?: unknown }).content;
  if (typeof before === "string" && typeof after === "string") return { ...seen, ...chunk, content: before + after } as MessageLike;
  return chunk;
}
