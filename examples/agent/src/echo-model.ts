import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";

/**
 * The text of a message's content: a string, or content blocks (agent-chat-ui sends
 * `[{"type": "text", "text": ...}]`) whose text parts are joined; other blocks (images,
 * files) are named by their type.
 */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block) => (typeof block === "string" ? block : block?.type === "text" && typeof block.text === "string" ? block.text : `[${block?.type ?? "content"}]`))
    .join(" ");
}

/**
 * A chat model that needs no network: it answers "You said: <last message>" and,
 * when streamed, emits the answer word by word, like a real provider's tokens.
 */
export class EchoChatModel extends BaseChatModel {
  _llmType(): string {
    return "echo";
  }

  private reply(messages: BaseMessage[]): string {
    return `You said: ${textOf(messages.at(-1)?.content ?? "")}`;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const text = this.reply(messages);
    return { generations: [{ text, message: new AIMessage(text) }] };
  }

  async *_streamResponseChunks(
    messages: BaseMessage[],
    _options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const words = this.reply(messages).split(/(?<= )/);
    for (const word of words) {
      const chunk = new ChatGenerationChunk({ text: word, message: new AIMessageChunk({ content: word }) });
      yield chunk;
      await runManager?.handleLLMNewToken(word);
    }
  }
}
