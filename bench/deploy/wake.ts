import type { Api } from "../../test/pipeline/api.ts";

/**
 * A sleeping deployment's first request (issue 32, goal 4: answered within 2 s of its
 * arrival). The deployment is set to sleep after one "minute" of a control plane whose
 * minute lasts SLIPWAY_SLEEP_MINUTE_MS; each round waits until its record says it sleeps,
 * then times a thread read through its URL, which the router holds while it wakes. The
 * setting is put back to never at the end.
 */
export async function measureWakes(cpApi: Api, deployment: { id: string; url: string }, apiKey: string, rounds: number): Promise<number[]> {
  const headers = { "x-api-key": apiKey, "content-type": "application/json" };
  const thread = (await (await fetch(`${deployment.url}/threads`, { method: "POST", headers, body: "{}" })).json()) as { thread_id: string };
  const set = await cpApi.call("PATCH", `/v2/deployments/${deployment.id}`, { slipway_sleep_after_minutes: 1 });
  if (set.status !== 200) throw new Error(`setting the deployment to sleep failed: ${set.status} ${JSON.stringify(set.body)}`);
  const seconds: number[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      await untilAsleep(cpApi, deployment.id);
      const sent = performance.now();
      const response = await fetch(`${deployment.url}/threads/${thread.thread_id}`, { headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`the request that woke the deployment was answered ${response.status}`);
      seconds.push((performance.now() - sent) / 1000);
    }
  } finally {
    await cpApi.call("PATCH", `/v2/deployments/${deployment.id}`, { slipway_sleep_after_minutes: 0 });
  }
  return seconds;
}

async function untilAsleep(cpApi: Api, id: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await cpApi.call("GET", `/v2/deployments/${id}`)).body.slipway_sleeping) {
    if (Date.now() > deadline) throw new Error(`deployment ${id} did not fall asleep within 120 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
