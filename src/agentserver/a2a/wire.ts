/**
 * A2A 0.3 wire shapes (the JSON-RPC binding the vendor's server speaks) and its error
 * codes. Only what this endpoint sends or reads.
 */

export const TASK_NOT_FOUND = -32001;
export const TASK_NOT_CANCELABLE = -32002;
export const CONTENT_TYPE_NOT_SUPPORTED = -32005;

export const A2A_PROTOCOL_VERSION = "0.3.0";

export type TaskState = "submitted" | "working" | "input-required" | "completed" | "canceled" | "failed";

export interface TextPart {
  kind: "text";
  text: string;
}
export interface DataPart {
  kind: "data";
  data: Record<string, unknown>;
}
export type Part = TextPart | DataPart;

export interface A2aMessage {
  kind: "message";
  role: "user" | "agent";
  messageId: string;
  parts: Part[];
  contextId?: string;
  taskId?: string;
}

export interface TaskStatus {
  state: TaskState;
  timestamp: string;
  message?: A2aMessage;
}

export interface Artifact {
  artifactId: string;
  name: string;
  parts: Part[];
}

export interface Task {
  kind: "task";
  id: string;
  contextId: string;
  status: TaskStatus;
  artifacts?: Artifact[];
  history?: A2aMessage[];
}
