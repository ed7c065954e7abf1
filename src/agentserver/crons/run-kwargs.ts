import type { RunKwargs } from "../runs/repository.ts";
import { durabilityOf, streamModesOf } from "../runs/run-defaults.ts";
import type { CronRow } from "./repository.ts";

/**
 * What each firing's run is asked to do, from the cron's payload: a background run (no
 * client streams it as it starts; `stream_*` apply to streams joined later) with the
 * same defaults as POST /runs.
 */
export function runKwargsOf(cron: Pick<CronRow, "payload" | "thread_id" | "on_run_completed">): RunKwargs {
  const p = cron.payload as Partial<Record<string, unknown>> & {
    stream_mode?: string | string[];
    durability?: RunKwargs["durability"];
    checkpoint_during?: boolean;
  };
  return {
    input: p.input ?? null,
    command: null,
    config: (p.config as Record<string, unknown>) ?? {},
    context: (p.context as Record<string, unknown>) ?? {},
    stream_mode: streamModesOf(p.stream_mode),
    stream_subgraphs: (p.stream_subgraphs as boolean) ?? false,
    stream_resumable: (p.stream_resumable as boolean) ?? false,
    interrupt_before: (p.interrupt_before as RunKwargs["interrupt_before"]) ?? null,
    interrupt_after: (p.interrupt_after as RunKwargs["interrupt_after"]) ?? null,
    checkpoint_id: null,
    checkpoint_ns: "",
    durability: durabilityOf(p),
    webhook: (p.webhook as string) ?? null,
    on_disconnect: "continue",
    // A stateless cron's "delete": the new thread goes when its run ends.
    temporary: cron.thread_id === null && cron.on_run_completed !== "keep",
    feedback_keys: null,
  };
}
