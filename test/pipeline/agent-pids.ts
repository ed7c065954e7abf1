/** The agent processes a revision's deploy log says were started ("started (pid N)"), in order. */
export function startedPids(deployLog: string): number[] {
  return [...deployLog.matchAll(/started \(pid (\d+)\)/g)].map((match) => Number(match[1]));
}

/** Whether a process of that id still runs. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
