import { stopAll } from "./processes.ts";
import type { Column } from "./report.ts";
import type { Target } from "./targets.ts";
import { runWorkload, type Watched, type WorkloadOptions } from "./workload.ts";

/** A server to measure: its label before it runs, and how to start it. */
export interface Plan {
  label: string;
  start: () => Promise<Target>;
}

/**
 * The workload against each planned server, one at a time (on two cores, servers side by
 * side would skew each other); each is stopped before the next starts, and a server that
 * fails gets a column saying why. `watchedOf` names the processes whose CPU is counted.
 */
export async function measureInTurn<P extends Plan>(plans: P[], workload: WorkloadOptions, watchedOf: (plan: P, target: Target) => Watched): Promise<Column[]> {
  const columns: Column[] = [];
  try {
    for (const plan of plans) {
      console.error(`[bench] starting ${plan.label}`);
      let target: Target | undefined;
      try {
        target = await plan.start();
        console.error(`[bench] ${target.label} at ${target.url}: running workload`);
        columns.push({ label: target.label, result: await runWorkload(target.url, workload, watchedOf(plan, target)) });
      } catch (error) {
        columns.push({ label: target?.label ?? plan.label, failure: (error as Error).message });
      } finally {
        await target?.stop();
      }
    }
  } finally {
    await stopAll();
  }
  return columns;
}
