import { execFileSync } from "node:child_process";
import { ensurePythonEnv } from "./python-env.ts";

/** One sample of a metric family, as Prometheus's own Python client parses it. */
export interface PrometheusSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PrometheusFamily {
  name: string;
  type: string;
  samples: PrometheusSample[];
}

const PARSER = `
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": family.name, "type": family.type, "samples": [
        {"name": s.name, "labels": s.labels, "value": s.value if math.isfinite(s.value) else str(s.value)} for s in family.samples]})
print(json.dumps(out))
`;

/**
 * Parses exposition text with prometheus_client's parser (the Prometheus project's own
 * client library), which refuses what a Prometheus server would not read.
 */
export function parsePrometheusText(text: string): PrometheusFamily[] {
  const python = ensurePythonEnv("prometheus-parser", ["prometheus-client==0.26.0"]);
  return JSON.parse(execFileSync(python, ["-c", PARSER], { input: text, encoding: "utf8" })) as PrometheusFamily[];
}
