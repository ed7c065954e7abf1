import { readFileSync } from "node:fs";
import { ConnectionError, ControlPlaneError, type ControlPlaneClient } from "../../client/index.ts";
import { DEFAULT_RETRY, retryDelayMs } from "../../client/retry.ts";

/**
 * Uploads a packed project and answers its object_path. An upload URL works once, so a
 * failed PUT is not repeated on the same URL: the pair (ask for a URL, PUT) is, with a
 * fresh URL each time (asking for one is safe to repeat).
 */
export async function uploadSource(client: ControlPlaneClient, deploymentId: string, tarball: string, onRetry: (text: string) => void): Promise<string> {
  const bytes = readFileSync(tarball);
  for (let attempt = 0; ; attempt++) {
    const target = await client.deployments.uploadUrl(deploymentId);
    try {
      await client.deployments.upload(target.upload_url, bytes);
      return target.object_path;
    } catch (error) {
      const passing = error instanceof ConnectionError || (error instanceof ControlPlaneError && (error.status >= 500 || error.status === 429));
      const delay =
        passing && attempt < DEFAULT_RETRY.retries ? retryDelayMs(attempt, DEFAULT_RETRY, (error as ControlPlaneError).retryAfterSeconds) : undefined;
      if (delay === undefined) throw error;
      onRetry(`upload failed (${(error as Error).message}); trying again with a new upload URL in ${(delay / 1000).toFixed(1)} s`);
      await DEFAULT_RETRY.sleep(delay);
    }
  }
}
