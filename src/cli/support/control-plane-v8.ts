import { setFlagsFromString } from "node:v8";

/**
 * V8 settings of the `slipway up` process, set before its databases start (decision 0054).
 * WebAssembly runs on V8's baseline compiler (Liftoff) only: the embedded databases'
 * PostgreSQL, compiled again by the optimizing compiler once parts of it run hot, held
 * about 55 MB more at rest, most of an idle control plane's excess over 200 MB. With
 * SLIPWAY_WASM_OPTIMIZE=1 it is optimized as in any Node process. A flag of the process:
 * the databases' threads, started later, share it. Returns the flags set.
 */
export function tuneControlPlaneV8(env: NodeJS.ProcessEnv = process.env): string[] {
  const flags = env.SLIPWAY_WASM_OPTIMIZE === "1" ? [] : ["--liftoff-only"];
  for (const flag of flags) setFlagsFromString(flag);
  return flags;
}
