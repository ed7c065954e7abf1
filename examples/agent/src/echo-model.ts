import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";

/**
 * A chat model that needs no network: it answers "You said: <last message>" and,
 * when streamed, emits the answer word by word, like a real provider's tokens.
 */
export class EchoChatModel extends BaseChatModel {
  _llmType(): string {
    return "echo";
  }

  private reply(messages: BaseMessage[]): string {
    const last = messages.at(-1);
    const text = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
    return `You said: ${text}`;
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
