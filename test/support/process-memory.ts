import { readFileSync, writeFileSync } from "node:fs";

/**
 * A child process's memory as Linux counts it (/proc/<pid>/status): what a request costs
 * the control plane, measured from outside it. `watchPeak` resets the process's high-water
 * mark (clear_refs 5), so `peakGrowth` is the most the request ever held, not what is left
 * once the garbage collector has run.
 */
function statusField(pid: number, field: "VmRSS" | "VmHWM"): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!match) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(match[1]) * 1024;
}

export const MB = 1024 * 1024;

/** Starts watching `pid`: its resident size now, and a fresh high-water mark. */
export function watchPeak(pid: number): { peakGrowth(): number } {
  const before = statusField(pid, "VmRSS");
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
  return { peakGrowth: () => statusField(pid, "VmHWM") - before };
}
