import { Type } from "@sinclair/typebox";

/**
 * Prometheus text exposition (version 0.0.4) shared by the agent server's and the
 * control plane's `/metrics`: latency histograms with the vendor's buckets, and label
 * sets escaped as the format requires.
 */
export const LATENCY_BUCKETS = [0.01, 0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, Infinity];

export const PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

/** The `format` query and the two answers of a `/metrics` route, as the vendor's agent server documents them. */
export const METRICS_QUERY = Type.Object({ format: Type.Optional(Type.Union([Type.Literal("prometheus"), Type.Literal("json")], { default: "prometheus" })) });
export const METRICS_RESPONSE = {
  200: {
    description: "Success",
    content: {
      "text/plain": { schema: Type.String({ description: "Metrics in Prometheus exposition format" }) },
      "application/json": { schema: Type.Object({}, { additionalProperties: true, description: "Metrics in JSON format" }) },
    },
  },
};

/**
 * A Fastify route template (`/threads/:thread_id`) in the OpenAPI spelling
 * (`/threads/{thread_id}`), as metrics label it. Every request records its route, so each
 * spelling is worked out once.
 */
const spellings = new Map<string, string>();
export function openApiPath(route: string): string {
  let path = spellings.get(route);
  if (path === undefined) spellings.set(route, (path = route.replace(/:([A-Za-z0-9_]+)/g, "{$1}")));
  return path;
}

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
