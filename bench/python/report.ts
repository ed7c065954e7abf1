import { fmt, rows, table, type Column } from "../agent/report.ts";

/** Which column is which in bench:python: ours on a Python graph or a JS one, or the vendor's. */
export const isOursPython = (c: Column) => c.label.startsWith("ours py");
export const isOursJs = (c: Column) => c.label.startsWith("ours js");
export const isVendor = (c: Column) => c.label.startsWith("vendor py");
const backendOf = (label: string) => /\((PGlite|PostgreSQL)\)/.exec(label)?.[1];

/**
 * The two ratios for each of our Python columns: against the vendor's Python dev
 * server, and against our JS path on the equivalent graph on the same back end.
 */
export function renderRatios(columns: Column[], concurrency: number, burst: number): string {
  const measured = columns.filter((c) => c.result);
  const vendor = measured.find(isVendor);
  const pairs: Array<{ label: string; ours: Column; other: Column }> = [];
  for (const ours of measured.filter(isOursPython)) {
    if (vendor) pairs.push({ label: `${ours.label} / vendor py`, ours, other: vendor });
    const js = measured.find((c) => isOursJs(c) && backendOf(c.label) === backendOf(ours.label));
    if (js) pairs.push({ label: `${ours.label} / ${js.label}`, ours, other: js });
  }
  if (!pairs.length) return "ratios: not enough columns measured";
  const body = rows(concurrency, burst).map((row) => [
    row.name,
    ...pairs.map((p) => fmt(row.value(p.ours.result!) / row.value(p.other.result!), 2)),
    row.higherIsBetter ? "higher" : "lower",
  ]);
  const goals = pairs.map((p) => {
    const ratio = p.ours.result!.runsPerSecond / p.other.result!.runsPerSecond;
    const goal = isVendor(p.other) ? 1 : 0.5;
    const verdict = ratio >= goal ? "met" : `missed by ${fmt((1 - ratio / goal) * 100, 0)}% (needs ${fmt(goal * p.other.result!.runsPerSecond, 1)} runs/s)`;
    return `goal ${p.label} throughput >= ${goal}: ${fmt(ratio, 2)}, ${verdict}`;
  });
  return [table(["ratio", ...pairs.map((p) => p.label), "better"], body), "", ...goals].join("\n");
}

/** Where a create+wait run's CPU went, with our Python worker apart from the Node server that started it. */
export function renderPythonCpu(columns: Column[]): string {
  const measured = columns.filter((c) => c.result?.waitCpu);
  if (!measured.length) return "CPU per run: not measured (needs Linux's /proc)";
  const cpu = (c: Column) => c.result!.waitCpu!;
  const ms = (n: number | undefined) => (n === undefined ? "-" : fmt(n, 2));
  const worker = (c: Column) => cpu(c).partsMs?.["python worker"];
  const body = [
    ["SDK client (the bench process)", ...measured.map((c) => ms(cpu(c).clientMs))],
    ["server: all its threads and processes", ...measured.map((c) => ms(cpu(c).serverMainMs + cpu(c).serverOtherMs))],
    ["  of which its main thread", ...measured.map((c) => ms(cpu(c).serverMainMs))],
    ["  of which our Python worker", ...measured.map((c) => ms(worker(c)))],
    ["PostgreSQL server processes", ...measured.map((c) => ms(cpu(c).postgresMs))],
    ["machine: every CPU's busy time", ...measured.map((c) => ms(cpu(c).machineBusyMs))],
    ["machine idle during the phase", ...measured.map((c) => `${fmt(cpu(c).machineIdle * 100, 0)}%`)],
    ["runs/s with every CPU busy at this cost", ...measured.map((c) => fmt((cpu(c).cpus * 1000) / cpu(c).machineBusyMs, 1))],
  ];
  return table([`CPU per create+wait run, ms (${cpu(measured[0]).cpus} CPUs, shared)`, ...measured.map((c) => c.label)], body);
}
