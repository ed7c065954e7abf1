import type { ControlPlaneProcess } from "../support/control-plane-process.ts";

/** A thin caller of a running control plane's API, for the pipeline tests. */
export interface Api {
  call<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** Polls a revision until its status is terminal (or `until` holds); fails after `timeoutMs` with its logs. */
  waitForRevision(deploymentId: string, revisionId: string, options?: { timeoutMs?: number; until?: (status: string) => boolean }): Promise<any>;
  logs(deploymentId: string, revisionId: string, type: "build" | "deploy"): Promise<string[]>;
}

const TERMINAL = ["DEPLOYED", "CREATE_FAILED", "BUILD_FAILED", "DEPLOY_FAILED", "INTERRUPTED", "SKIPPED"];

export function api(cp: Pick<ControlPlaneProcess, "url" | "apiKey" | "workspaceId">, apiKey = cp.apiKey!): Api {
  const self: Api = {
    async call(method, path, body) {
      const response = await fetch(`${cp.url}${path}`, {
        method,
        headers: { "x-api-key": apiKey, "x-tenant-id": cp.workspaceId!, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    async waitForRevision(deploymentId, revisionId, options = {}) {
      const deadline = Date.now() + (options.timeoutMs ?? 240_000);
      const done = options.until ?? ((status: string) => TERMINAL.includes(status));
      let last: any;
      while (Date.now() < deadline) {
        last = (await self.call("GET", `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body;
        if (done(last.status)) return last;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const build = await self.logs(deploymentId, revisionId, "build");
      const deploy = await self.logs(deploymentId, revisionId, "deploy");
      throw new Error(`revision ${revisionId} still ${last?.status}:\nbuild log:\n${build.join("\n")}\ndeploy log:\n${deploy.join("\n")}`);
    },
    async logs(deploymentId, revisionId, type) {
      const lines: string[] = [];
      for (let offset: number | null = 0; offset !== null; ) {
        const page: { body: { logs: { message: string }[]; next_offset: number | null } } = await self.call(
          "GET",
          `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?type=${type}&limit=1000&offset=${offset}`,
        );
        lines.push(...page.body.logs.map((entry) => entry.message));
        offset = page.body.next_offset;
      }
      return lines;
    },
  };
  return self;
}
