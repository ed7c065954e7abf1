import { toWire, valuesToWire, type WireValues } from "../serialize.ts";
import { reshapePayload } from "./debug-payloads.ts";

/**
 * Maps the API's stream modes onto LangGraph's and graph chunks onto SSE events.
 *
 * API modes and what they need from the library:
 * - values, updates, debug, custom, tasks, checkpoints: the library mode of that name;
 * - messages-tuple: the library's `messages` mode, sent as event `messages` with
 *   `[chunk, metadata]`;
 * - messages: whole-message events (`messages/metadata`, `messages/partial`,
 *   `messages/complete`) built from chat-model callbacks, so it needs streamEvents;
 * - events: every streamEvents v2 event, sent as `events`.
 */
export interface StreamPlan {
  apiModes: Set<string>;
  libraryModes: string[];
  /** streamEvents is needed (events / messages modes); otherwise plain stream(). */
  useEvents: boolean;
  subgraphs: boolean;
}

export function planStream(apiModes: string[], subgraphs: boolean): StreamPlan {
  const modes = new Set(apiModes.length ? apiModes : ["values"]);
  const library = new Set<string>();
  for (const mode of modes) {
    if (mode === "messages-tuple") library.add("messages");
    else if (mode === "messages") library.add("values");
    else if (mode !== "events") library.add(mode);
  }
  // Always stream values: the run's final state is the last values chunk.
  library.add("values");
  return { apiModes: modes, libraryModes: [...library], useEvents: modes.has("events") || modes.has("messages"), subgraphs };
}

/**
 * Whether a stream filtered to `modes` (a join stream's stream_mode) sends an event:
 * `metadata` and `error` always; `<mode>`, a subgraph's `<mode>|<namespace>` and the
 * legacy messages' `<mode>/<part>`; messages-tuple covers every `messages` event.
 * No modes: everything.
 */
export function eventInModes(event: string, modes: readonly string[] | undefined): boolean {
  if (!modes?.length || event === "metadata" || event === "error") return true;
  return modes.some(
    (mode) => event === mode || event.startsWith(`${mode}|`) || event.startsWith(`${mode}/`) || (mode === "messages-tuple" && event.startsWith("messages")),
  );
}

export type Emit = (event: string, data: unknown) => void;

/**
 * One chunk of graph.stream(...): [mode, data] or [namespace, mode, data] with subgraphs.
 * A root `values` chunk comes back, with its wire form when it was sent (for the run's end).
 */
export function emitChunk(plan: StreamPlan, chunk: unknown, emit: Emit): { values?: unknown; sent?: WireValues } {
  const [namespace, mode, data] = splitChunk(chunk, plan);
  const suffix = namespace.length ? `|${namespace.join("|")}` : "";
  const isRoot = namespace.length === 0;
  if (mode === "messages") {
    if (plan.apiModes.has("messages-tuple")) emit(`messages${suffix}`, toWire(data));
    return {};
  }
  const sends = plan.apiModes.has(mode) || (mode === "values" && plan.apiModes.size === 0);
  if (mode === "values" && isRoot) {
    if (!sends) return { values: data };
    const wire = valuesToWire(data);
    emit(`values${suffix}`, wire);
    const sent =
      data && typeof data === "object" && wire && typeof wire === "object"
        ? { raw: data as Record<string, unknown>, wire: wire as Record<string, unknown> }
        : undefined;
    return { values: data, sent };
  }
  if (sends) emit(`${mode}${suffix}`, toWire(reshapePayload(mode, data)));
  return {};
}

function splitChunk(chunk: unknown, plan: StreamPlan): [string[], string, unknown] {
  const modes = plan.libraryModes;
  const parts = Array.isArray(chunk) ? chunk : undefined;
  const isMode = (value: unknown) => typeof value === "string" && modes.includes(value);
  if (plan.subgraphs && parts?.length === 3 && isMode(parts[1])) return [(parts[0] as string[]) ?? [], parts[1] as string, parts[2]];
  if (parts?.length === 2 && isMode(parts[0])) return [[], parts[0] as string, parts[1]];
  // Early LangGraph.js (0.2.8 does) yields the chunks of a one-mode list bare (with subgraphs,
  // `[namespace, data]`), as for a mode given as a string.
  if (modes.length === 1) {
    if (plan.subgraphs && parts?.length === 2 && Array.isArray(parts[0])) return [parts[0] as string[], modes[0]!, parts[1]];
    return [[], modes[0]!, chunk];
  }
  return [[], parts?.[0] as string, parts?.[1]];
}
