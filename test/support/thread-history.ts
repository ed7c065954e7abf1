import { expect } from "vitest";

/**
 * Helpers of the tests that race state updates, prunes and runs of one thread
 * (decision 0025): calls that must answer, and checks that a thread's history stayed
 * one line.
 */

/** Long enough for any call there; a call still waiting then is a hang. */
const WAIT_MS = 10_000;

export interface Outcome {
  status: number;
  body?: unknown;
  error?: string;
}

/** The call's HTTP status (200 for an answer); 0 when it still waits after WAIT_MS. */
export async function settle(call: (signal: AbortSignal) => Promise<unknown>): Promise<Outcome> {
  const signal = AbortSignal.timeout(WAIT_MS);
  try {
    return { status: 200, body: await call(signal) };
  } catch (error) {
    if (signal.aborted) return { status: 0, error: `still waiting after ${WAIT_MS} ms` };
    const e = error as { status?: number; message?: string };
    return { status: e.status ?? -1, error: e.message };
  }
}

type Messages = { messages?: Array<{ content: string }> };
export const human = (content: string) => ({ messages: [{ role: "human", content }] });
export const ai = (content: string) => ({ messages: [{ role: "ai", content }] });
export const contents = (values: unknown) => ((values as Messages).messages ?? []).map((m) => m.content);

type HistoryItem = {
  checkpoint: { checkpoint_id?: string | null };
  parent_checkpoint?: { checkpoint_id?: string | null } | null;
  metadata?: Record<string, unknown> | null;
};

/** Newest first, each checkpoint the parent of the one before it. */
export function expectOneLine(history: HistoryItem[]): void {
  for (let i = 0; i + 1 < history.length; i++) {
    expect(history[i].parent_checkpoint?.checkpoint_id).toBe(history[i + 1].checkpoint.checkpoint_id);
  }
}

/** The thread's history is one line, and the run's own part of it starts at its input checkpoint. */
export function expectRunLineWhole(history: HistoryItem[], runId: string): void {
  const ofRun = history.filter((h) => h.metadata?.run_id === runId);
  expect(ofRun.map((h) => h.metadata?.source).at(-1)).toBe("input");
  expectOneLine(history);
}
