import type { Api } from "../../test/pipeline/api.ts";

/**
 * Deploys the deployment's branch again (a new commit was pushed) while four callers
 * keep calling its URL with plain HTTP (no retries, unlike the SDK): a stateless run and
 * a thread read each turn. Every answer that is not a 2xx, and every network error, is
 * a failed request.
 */
export async function switchUnderLoad(cpApi: Api, deployment: { id: string; url: string }, apiKey: string) {
  const headers = { "x-api-key": apiKey, "content-type": "application/json" };
  const thread = (await (await fetch(`${deployment.url}/threads`, { method: "POST", headers, body: "{}" })).json()) as { thread_id: string };
  let stop = false;
  let requests = 0;
  let failed = 0;
  const count = async (call: () => Promise<Response>) => {
    requests++;
    try {
      const response = await call();
      await response.arrayBuffer();
      if (response.status >= 300) failed++;
    } catch {
      failed++;
    }
  };
  const caller = async () => {
    while (!stop) {
      await count(() => fetch(`${deployment.url}/runs/wait`, { method: "POST", headers, body: JSON.stringify({ assistant_id: "whoami", input: {} }) }));
      await count(() => fetch(`${deployment.url}/threads/${thread.thread_id}`, { headers }));
    }
  };
  const callers = Array.from({ length: 4 }, caller);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const started = performance.now();
  const patched = await cpApi.call("PATCH", `/v2/deployments/${deployment.id}`, { source_revision_config: { repo_ref: "main" } });
  const revision = await cpApi.waitForRevision(deployment.id, patched.body.latest_revision_id, { timeoutMs: 900_000 });
  const seconds = (performance.now() - started) / 1000;
  if (revision.status !== "DEPLOYED") throw new Error(`the switch's revision ended ${revision.status}: ${revision.status_message}`);
  // Keep calling while the old revision drains and stops.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  stop = true;
  await Promise.all(callers);
  return { requests, failed, seconds, revisionId: revision.id as string };
}
