import type { RunKwargs } from "./repository.ts";

/**
 * The defaults a run is created with, shared by POST /runs and a cron's firings, which
 * take the same payload.
 */

/** The stream modes asked for, once each; none given (or an empty list) means `values`. */
export function streamModesOf(requested: string | string[] | null | undefined): string[] {
  const modes = requested == null ? [] : Array.isArray(requested) ? requested : [requested];
  return modes.length > 0 ? [...new Set(modes)] : ["values"];
}

/** `durability` when given; otherwise the older `checkpoint_during: false` means `exit`, and the default is `async`. */
export function durabilityOf(payload: { durability?: RunKwargs["durability"] | null; checkpoint_during?: boolean | null }): RunKwargs["durability"] {
  return payload.durability ?? (payload.checkpoint_during === false ? "exit" : "async");
}
