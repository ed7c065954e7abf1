import type { RunStatus } from "../runs/schemas.ts";
import type { A2aMessage, Artifact, Part, Task, TaskState } from "./wire.ts";

/**
 * A task is a run; its context is the run's thread. The state follows the run's status;
 * a run that ended with the thread waiting at an interrupt() is "input-required".
 */
export function taskState(status: RunStatus, threadStatus?: string): TaskState {
  switch (status) {
    case "pending":
      return "submitted";
    case "running":
      return "working";
    case "success":
      return threadStatus === "interrupted" ? "input-required" : "completed";
    case "interrupted":
      return "canceled";
    case "error":
    case "timeout":
      return "failed";
  }
}

export function task(runId: string, contextId: string, state: TaskState, extra: { values?: unknown; error?: string; history?: A2aMessage[] } = {}): Task {
  const out: Task = { kind: "task", id: runId, contextId, status: { state, timestamp: new Date().toISOString() } };
  if (extra.error !== undefined) out.status.message = agentMessage(runId, contextId, [{ kind: "text", text: extra.error }]);
  if (state === "completed" || state === "input-required") {
    const artifact = artifactOf(runId, extra.values);
    if (artifact) out.artifacts = [artifact];
  }
  if (extra.history) out.history = extra.history;
  return out;
}

/** The graph's answer: the text of its last AI message; a graph without messages answers with its values as data. */
export function artifactOf(runId: string, values: unknown): Artifact | undefined {
  if (values === null || typeof values !== "object") return undefined;
  const text = lastAiText(values as Record<string, unknown>);
  const parts: Part[] = text !== undefined ? [{ kind: "text", text }] : [{ kind: "data", data: values as Record<string, unknown> }];
  return { artifactId: `${runId}-response`, name: "Assistant Response", parts };
}

function lastAiText(values: Record<string, unknown>): string | undefined {
  const messages = values.messages;
  if (!Array.isArray(messages)) return undefined;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as { type?: unknown; role?: unknown; content?: unknown } | null;
    if (!message || (message.type !== "ai" && message.role !== "assistant" && message.role !== "ai")) continue;
    return contentText(message.content);
  }
  return undefined;
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((block) => (typeof block === "string" ? block : typeof block?.text === "string" ? block.text : "")).join("");
  }
  return JSON.stringify(content ?? "");
}

function agentMessage(runId: string, contextId: string, parts: Part[]): A2aMessage {
  return { kind: "message", role: "agent", messageId: crypto.randomUUID(), parts, contextId, taskId: runId };
}
