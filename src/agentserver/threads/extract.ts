import { invalidField } from "../../http/errors.ts";

/**
 * `extract` of POST /threads/search: `{alias: path}` where a path starts at values,
 * metadata, config or interrupts and goes on with `.key` and `[index]` steps (a
 * negative index counts from the end), e.g. `values.messages[-1].content`.
 */

type PathStep = string | number;
const EXTRACT_ROOTS = ["values", "metadata", "config", "interrupts"] as const;
type Root = (typeof EXTRACT_ROOTS)[number];

export interface ExtractPath {
  root: Root;
  steps: PathStep[];
}

const STEP = /^(?:\.([A-Za-z0-9_\-$]+)|\[(-?\d+)\]|\["((?:[^"\\]|\\.)*)"\])/;

/** Parses one path; a bad one is a 422 naming `extract.<alias>`. */
function parseExtractPath(alias: string, path: string): ExtractPath {
  const fail = (why: string) => invalidField(["body", "extract", alias], why);
  const rootMatch = /^([a-z]+)/.exec(path);
  const root = rootMatch?.[1] as Root | undefined;
  if (!root || !EXTRACT_ROOTS.includes(root)) throw fail(`path must start with ${EXTRACT_ROOTS.join(", ")}`);
  const steps: PathStep[] = [];
  let rest = path.slice(root!.length);
  while (rest.length) {
    const match = STEP.exec(rest);
    if (!match) throw fail(`cannot read the path at "${rest}": use .key, [index] or ["key"] steps`);
    if (match[1] !== undefined) steps.push(match[1]);
    else if (match[2] !== undefined) steps.push(Number(match[2]));
    else steps.push(JSON.parse(`"${match[3]}"`) as string);
    rest = rest.slice(match[0].length);
  }
  if (steps.length > 16) throw fail("path is deeper than 16 steps");
  return { root: root!, steps };
}

export function parseExtract(extract: Record<string, string>): Array<[string, ExtractPath]> {
  return Object.entries(extract).map(([alias, path]) => [alias, parseExtractPath(alias, path)]);
}

/** Follows `steps` from `value`; a missing step yields null. */
export function follow(value: unknown, steps: PathStep[]): unknown {
  let current = value;
  for (const step of steps) {
    if (current === null || current === undefined) return null;
    if (typeof step === "number") {
      if (!Array.isArray(current)) return null;
      current = current[step < 0 ? current.length + step : step];
    } else {
      if (typeof current !== "object" || Array.isArray(current)) return null;
      current = (current as Record<string, unknown>)[step];
    }
  }
  return current ?? null;
}
