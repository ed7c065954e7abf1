import type { WorkloadResult } from "./workload.ts";

/** One column of the table: a target's label and its figures (or why it has none). */
export interface Column {
  label: string;
  result?: WorkloadResult;
  failure?: string;
}

interface Row {
  name: string;
  value: (r: WorkloadResult) => number;
  digits: number;
  /** Whether a larger number is better: decides how the ratio reads. */
  higherIsBetter: boolean;
}

export function rows(concurrency: number, burst: number): Row[] {
  return [
    { name: `create+wait throughput (c=${concurrency}), runs/s`, value: (r) => r.runsPerSecond, digits: 1, higherIsBetter: true },
    { name: "create+wait latency p50, ms", value: (r) => r.waitP50Ms, digits: 0, higherIsBetter: false },
    { name: "create+wait latency p99, ms", value: (r) => r.waitP99Ms, digits: 0, higherIsBetter: false },
    { name: "stream: first `updates` event p50, ms", value: (r) => r.streamFirstUpdateP50Ms, digits: 1, higherIsBetter: false },
    { name: `enqueue burst: ${burst} runs + join last, ms`, value: (r) => r.burstMs, digits: 0, higherIsBetter: false },
  ];
}

export const fmt = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

export function table(header: string[], body: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
}

export function render(columns: Column[], concurrency: number, burst: number): string {
  const measured = columns.filter((c) => c.result);
  const out: string[] = [];
  const body = rows(concurrency, burst).map((row) => [row.name, ...measured.map((c) => fmt(row.value(c.result!), row.digits))]);
  body.push(["runs completed / errors", ...measured.map((c) => `${c.result!.waitRuns} / ${c.result!.waitErrors + c.result!.streamErrors}`)]);
  body.push(["enqueue burst: FIFO and complete", ...measured.map((c) => (c.result!.burstComplete ? "yes" : "NO"))]);
  out.push(table(["", ...measured.map((c) => c.label)], body));

  // Ratios ours/peer: >1 means ours is larger; the last column says which way is better.
  const peer = measured.find((c) => c.label.startsWith("peer"));
  const ours = measured.filter((c) => c !== peer);
  if (peer && ours.length) {
    const ratioBody = rows(concurrency, burst).map((row) => [
      row.name,
      ...ours.map((c) => fmt(row.value(c.result!) / row.value(peer.result!), 2)),
      row.higherIsBetter ? "higher" : "lower",
    ]);
    out.push("", table(["ours / peer", ...ours.map((c) => c.label), "better"], ratioBody));
  }
  for (const c of columns) {
    if (c.failure) out.push("", `${c.label}: not measured: ${c.failure}`);
    else if (c.result?.firstError) out.push("", `${c.label}: first error: ${c.result.firstError}`);
  }
  return out.join("\n");
}

/** What the graph and the SDK cost on their own (agent/floor.ts). */
export interface Floor {
  graphRunsPerSecond: number;
  /** By storage back end ("PGlite", "PostgreSQL"). */
  durableRunsPerSecond: Record<string, number>;
  /** Every CPU's busy time per run while the durable ceiling was measured (Linux), by back end. */
  durableMachineMsPerRun?: Record<string, number | undefined>;
  graphFirstUpdateMs: number;
  transportFirstUpdateMs: number;
}

/**
 * The floors, next to the goals computed from the peer's figures of this run
 * (10x its throughput, 1/20 of its first-event latency).
 */
export function renderFloor(floor: Floor, columns: Column[], concurrency: number): string {
  const body = [
    [`graph alone, in-process, c=${concurrency}: runs/s (ceiling)`, fmt(floor.graphRunsPerSecond, 1)],
    ...Object.entries(floor.durableRunsPerSecond).map(([backend, rate]) => [
      `graph + our checkpointer on ${backend}, in-process, c=${concurrency}: runs/s (durable ceiling)`,
      fmt(rate, 1),
    ]),
    ["graph alone: first `updates` chunk p50, ms", fmt(floor.graphFirstUpdateMs, 2)],
    ["SDK + HTTP alone (stub server): first `updates` event p50, ms", fmt(floor.transportFirstUpdateMs, 2)],
    ["sum of the two: first-event floor for any server, ms", fmt(floor.graphFirstUpdateMs + floor.transportFirstUpdateMs, 2)],
  ];
  const out = [table(["floors on this machine", ""], body)];
  const peer = columns.find((c) => c.label.startsWith("peer"))?.result;
  if (peer) {
    const goalRate = peer.runsPerSecond * 10;
    const goalFirst = peer.streamFirstUpdateP50Ms / 20;
    const firstFloor = floor.graphFirstUpdateMs + floor.transportFirstUpdateMs;
    out.push(
      "",
      `goal throughput, 10x the peer: ${fmt(goalRate, 1)} runs/s = ${fmt((goalRate / floor.graphRunsPerSecond) * 100, 0)}% of the graph-alone ceiling`,
      ...Object.entries(floor.durableRunsPerSecond).map(
        ([backend, rate]) =>
          `  and ${fmt((goalRate / rate) * 100, 0)}% of the durable ceiling on ${backend}` +
          (goalRate > rate ? " (above it: out of reach with this checkpointer on this machine)" : ""),
      ),
      `goal first event, 1/20 of the peer: ${fmt(goalFirst, 2)} ms = ${fmt((goalFirst / firstFloor) * 100, 0)}% of the first-event floor` +
        (goalFirst < firstFloor ? " (below the floor: no server can meet it on this machine)" : ""),
    );
  }
  return out.join("\n");
}

/** Statements per one-node create+wait run, by back end (agent/round-trips.ts). */
export type RoundTrips = Record<string, { roundTripsPerRun: number; concurrentRoundTripsPerRun: number; byKind: Record<string, number> }>;

/** One column per back end: total round trips per run, then where they go. */
export function renderRoundTrips(counts: RoundTrips): string {
  const backends = Object.keys(counts);
  const kinds = [...new Set(backends.flatMap((b) => Object.keys(counts[b].byKind)))];
  const body = [
    ["statements = round trips per run", ...backends.map((b) => fmt(counts[b].roundTripsPerRun, 1))],
    ...kinds.map((kind) => [`  ${kind}`, ...backends.map((b) => fmt(counts[b].byKind[kind] ?? 0, 1))]),
    ["round trips per run with 20 callers at once", ...backends.map((b) => fmt(counts[b].concurrentRoundTripsPerRun, 1))],
  ];
  return table(["one-node run: threads.create + runs.wait, one at a time", ...backends], body);
}

/** The in-flight scenario's figures, one column per server (agent/inflight.ts). */
export interface InflightColumn {
  label: string;
  result?: import("./inflight.ts").InflightResult;
  failure?: string;
}

export function renderInflight(columns: InflightColumn[], options: { runs: number; clients: number; waitMs: number }): string {
  const measured = columns.filter((c) => c.result);
  const body = [
    [`time until all ${options.runs} runs ended, s`, ...measured.map((c) => fmt(c.result!.seconds, 2))],
    ["server peak RSS (VmHWM), MB", ...measured.map((c) => fmt(c.result!.peakRssMb ?? Number.NaN, 0))],
    ["  its RSS before the runs (restarted server, one run), MB", ...measured.map((c) => fmt(c.result!.startRssMb ?? Number.NaN, 0))],
    ["runs ended as expected / errors", ...measured.map((c) => `${c.result!.ok} / ${c.result!.errors}`)],
    [
      "CPU seconds meanwhile: server / bench client",
      ...measured.map((c) => `${fmt(c.result!.serverCpuSeconds ?? Number.NaN, 1)} / ${fmt(c.result!.clientCpuSeconds, 1)}`),
    ],
  ];
  const out = [
    table([`in flight: ${options.runs} runs of a graph awaiting ${options.waitMs} ms, ${options.clients} clients`, ...measured.map((c) => c.label)], body),
  ];
  for (const c of columns) {
    if (c.failure) out.push(`${c.label}: not measured: ${c.failure}`);
    else if (c.result?.firstError) out.push(`${c.label}: first error: ${c.result.firstError}`);
  }
  return out.join("\n");
}

/** A column's back end, from its label ("ours (PGlite)" → "PGlite"). */
const backendOf = (label: string) => /\((PGlite|PostgreSQL)\)/.exec(label)?.[1];

/** The durable ceiling of a column's back end. */
function ceilingOf(floor: Floor | undefined, label: string): number | undefined {
  const backend = backendOf(label);
  return backend ? floor?.durableRunsPerSecond[backend] : undefined;
}

/**
 * Where the create+wait phase's CPU went, per run (agent/cpu-share.ts), and the issue's
 * goal beside it: create+wait at half the durable ceiling of the same back end. The
 * last rows say how many runs per second the machine could do at all if every CPU were
 * kept busy at that cost per run.
 */
export function renderCpu(columns: Column[], floor: Floor | undefined): string {
  const measured = columns.filter((c) => c.result?.waitCpu);
  if (!measured.length) return "CPU per run: not measured (needs Linux's /proc)";
  const cpu = (c: Column) => c.result!.waitCpu!;
  const ours = (c: Column) => c.label.startsWith("ours");
  const ms = (n: number | undefined) => (n === undefined ? "-" : fmt(n, 2));
  const possible = (c: Column) => (cpu(c).cpus * 1000) / cpu(c).machineBusyMs;
  const share = (c: Column, rate: number) => {
    const ceiling = ceilingOf(floor, c.label);
    return ceiling ? `${fmt((rate / ceiling) * 100, 0)}%` : "-";
  };
  const body = [
    ["SDK client (the bench process)", ...measured.map((c) => ms(cpu(c).clientMs))],
    ["server: all its threads and processes", ...measured.map((c) => ms(cpu(c).serverMainMs + cpu(c).serverOtherMs))],
    ["  of which its main thread", ...measured.map((c) => (ours(c) ? ms(cpu(c).serverMainMs) : "-"))],
    ["PostgreSQL server processes", ...measured.map((c) => ms(cpu(c).postgresMs))],
    ["machine: every CPU's busy time", ...measured.map((c) => ms(cpu(c).machineBusyMs))],
    [
      "  the same at the durable ceiling (graph + checkpointer in-process)",
      ...measured.map((c) => ms(backendOf(c.label) ? floor?.durableMachineMsPerRun?.[backendOf(c.label)!] : undefined)),
    ],
    ["machine idle during the phase", ...measured.map((c) => `${fmt(cpu(c).machineIdle * 100, 0)}%`)],
    ["create+wait runs/s measured", ...measured.map((c) => fmt(c.result!.runsPerSecond, 1))],
    ["  share of the durable ceiling (goal: 50%)", ...measured.map((c) => share(c, c.result!.runsPerSecond))],
    ["runs/s with every CPU busy at this cost", ...measured.map((c) => fmt(possible(c), 1))],
    ["  share of the durable ceiling", ...measured.map((c) => share(c, possible(c)))],
  ];
  const cpus = cpu(measured[0]).cpus;
  return table([`CPU per create+wait run, ms (${cpus} CPUs; client and server share them)`, ...measured.map((c) => c.label)], body);
}
