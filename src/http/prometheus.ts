/**
 * Prometheus text exposition (version 0.0.4) shared by the agent server's and the
 * control plane's `/metrics`: latency histograms with the vendor's buckets, and label
 * sets escaped as the format requires.
 */
export const LATENCY_BUCKETS = [0.01, 0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, Infinity];

export const PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

export class Histogram {
  readonly counts = LATENCY_BUCKETS.map(() => 0);
  sum = 0;
  count = 0;

  observe(seconds: number): void {
    const index = LATENCY_BUCKETS.findIndex((bound) => seconds <= bound);
    this.counts[index === -1 ? LATENCY_BUCKETS.length - 1 : index]!++;
    this.sum += seconds;
    this.count++;
  }
}

/** A histogram's `_bucket` lines (cumulative), then `_sum` and `_count`. */
export function histogramLines(out: string[], name: string, base: Record<string, string>, histogram: Histogram): void {
  let cumulative = 0;
  LATENCY_BUCKETS.forEach((bound, index) => {
    cumulative += histogram.counts[index]!;
    out.push(`${name}_bucket${labels({ ...base, le: bound === Infinity ? "+Inf" : String(bound) })} ${cumulative}`);
  });
  out.push(`${name}_sum${labels(base)} ${histogram.sum.toFixed(6)}`, `${name}_count${labels(base)} ${histogram.count}`);
}

/** `{a="1",b="2"}`, values escaped as the exposition format requires. */
export function labels(values: Record<string, string>): string {
  const escaped = Object.entries(values).map(([key, value]) => `${key}="${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`);
  return `{${escaped.join(",")}}`;
}

/** A metric's `# HELP` and `# TYPE` lines. */
export function describeMetric(out: string[], name: string, type: "gauge" | "counter" | "histogram", help: string): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
}
