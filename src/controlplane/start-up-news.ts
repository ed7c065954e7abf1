/** Where `slipway up` sends what it has to say while it starts: lines for people, each with its event for `--json`. */
export interface StartUpNews {
  say(text: string, event: Record<string, unknown>): void;
  /** A warning, on standard error. */
  warn(text: string): void;
}

/** What the pipeline's isolation probe found (pipeline/runtime/isolation.ts), as the news tells it. */
interface IsolationFacts {
  describe(): string;
  sandbox: { level: string; reason: string | undefined };
  limits: { kind: string; reason: string | undefined };
}

/** How deployments' code runs here: the operator reads whether it is sandboxed before anything is served. */
export function announceIsolation(news: StartUpNews, isolation: IsolationFacts, dockerVersion: string | undefined): void {
  if (dockerVersion !== undefined) {
    // Builds still run in the local sandbox; what serves runs in containers.
    news.say(`Slipway: deployments run in Docker containers (dockerd ${dockerVersion}); builds: ${isolation.describe()}`, {
      event: "isolation",
      runtime: "docker",
      docker: dockerVersion,
      sandbox: isolation.sandbox.level,
      limits: isolation.limits.kind,
    });
  } else {
    news.say(`Slipway: ${isolation.describe()}`, {
      event: "isolation",
      runtime: "local",
      sandbox: isolation.sandbox.level,
      limits: isolation.limits.kind,
      reason: isolation.sandbox.reason ?? isolation.limits.reason,
    });
  }
}

/** The default tenant of a new installation, with its key: shown this once. */
export function announceBootstrap(news: StartUpNews, created: { organization_id: string; workspace_id: string; api_key: string }): void {
  news.say(
    [
      'Slipway: new installation, created organization "Default" (plan self_hosted_enterprise)',
      `  organization_id: ${created.organization_id}`,
      `  workspace_id:    ${created.workspace_id}`,
      `  api_key:         ${created.api_key}`,
      "  The key is shown only this once: store it now. Send it as X-Api-Key and the workspace id as X-Tenant-Id.",
    ].join("\n"),
    { event: "bootstrap", organization_id: created.organization_id, workspace_id: created.workspace_id, api_key: created.api_key },
  );
}
