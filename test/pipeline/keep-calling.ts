/**
 * Calls a deployment's `whoami` graph (runs/wait) one call after another, and reads
 * `threadId` after each when given, until stopped: what a client sees through a switch.
 */
export function keepCalling(url: string, apiKey: string, threadId?: string): { statuses: Map<number, number>; versions: Set<string>; stop(): Promise<void> } {
  const statuses = new Map<number, number>();
  const versions = new Set<string>();
  const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const answer = await fetch(`${url}/runs/wait`, {
        method: "POST",
        headers: { "x-api-key": apiKey, "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "whoami", input: {} }),
      }).catch((error: Error) => ({ status: 0, json: async () => ({ error: error.message }) }));
      count(answer.status);
      const body = (await answer.json()) as { version?: string };
      if (body.version) versions.add(body.version);
      if (!threadId) continue;
      const read = await fetch(`${url}/threads/${threadId}`, { headers: { "x-api-key": apiKey } }).catch(() => ({ status: 0, text: async () => "" }));
      count(read.status);
      await read.text();
    }
  })();
  return {
    statuses,
    versions,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
