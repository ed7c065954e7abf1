/**
 * How many builds this process is running. A package cache is pruned only when none is
 * (docs/decisions/0051): a build may be linking a layer or reusing an environment that
 * no finished build names yet. A data directory, and so its caches, belong to one
 * control-plane process.
 */
let underway = 0;

export function buildsUnderway(): number {
  return underway;
}

/** Counts a build from now until the returned function is called. */
export function beginBuild(): () => void {
  underway++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    underway--;
  };
}
