/** A graph of langgraph.json that cannot be loaded: which graph, which file, and why. */
export class GraphLoadError extends Error {
  readonly graphId?: string;
  readonly file?: string;

  constructor(message: string, details: { graphId?: string; file?: string; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "GraphLoadError";
    this.graphId = details.graphId;
    this.file = details.file;
  }
}

/** Frames of Node's internals and of the TypeScript loader: they say nothing to a user. */
const NOISE = ["node:internal/", "(node:", "at node:", "/node_modules/tsx/", "/node_modules/esbuild/"];

/**
 * The message followed by the first stack frames of the underlying error, so that a
 * failing start or build shows where in the user's code things went wrong.
 */
export function describeLoadFailure(error: unknown, frames = 6): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof GraphLoadError ? error.cause : undefined;
  const stack = cause instanceof Error ? (cause.stack ?? "") : "";
  const lines = stack
    .split("\n")
    .filter((line) => /^\s+at /.test(line) && !NOISE.some((part) => line.includes(part)))
    .slice(0, frames);
  return [message, ...lines].join("\n");
}
