import { createHmac, timingSafeEqual } from "node:crypto";
import { openSecret } from "../../auth/secret-box.ts";
import { SlipwayError } from "../../http/errors.ts";
import type { ControlPlaneDeps } from "../context.ts";
import { lockDeployment } from "../deployments/repository.ts";
import * as revisions from "../revisions/repository.ts";
import type { RevisionService } from "../revisions/service.ts";
import { repoKey } from "./repo-key.ts";
import { findIntegrationForWebhook, pushDeployments } from "./repository.ts";

/** GitHub's push event, the fields a build needs. Gitea, Forgejo and GitLab send the same shape (GitLab's compat). */
interface PushEvent {
  ref?: string;
  after?: string;
  deleted?: boolean;
  repository?: { clone_url?: string; ssh_url?: string; git_url?: string; html_url?: string; url?: string };
}

const PUSH_QUIET_MS = 3_000;

/**
 * Push webhooks from git hosts: the builds that `build_on_push` asks for.
 *
 * @example
 * const webhooks = new WebhookService(deps, new RevisionService(deps));
 * const { revisions } = await webhooks.receivePush({ integrationId, event: "push", raw, signature });
 */
export class WebhookService {
  constructor(
    private readonly deps: Pick<ControlPlaneDeps, "db" | "now" | "secretsKey" | "pushQuietMs">,
    private readonly revisions: RevisionService,
  ) {}

  /**
   * A push to a repository: verifies `X-Hub-Signature-256` (HMAC-SHA256 of the raw body
   * with the integration's webhook secret; 401 otherwise, and nothing is created), then
   * makes a revision at the pushed commit for every deployment of the integration's
   * workspace that builds on push from that repository and branch. The revision waits a
   * quiet period first (`pushQuietMs`): a newer push in the meantime supersedes it
   * (SKIPPED), so pushes in quick succession build once, the newest.
   */
  async receivePush(delivery: {
    integrationId: string;
    event: string;
    raw: Buffer;
    signature: string | undefined;
  }): Promise<{ revisions: { deployment_id: string; revision_id: string }[] }> {
    const { deps } = this;
    const quietMs = deps.pushQuietMs ?? PUSH_QUIET_MS;
    const { integrationId, raw, signature } = delivery;
    const integration = await findIntegrationForWebhook(deps.db, integrationId.toLowerCase());
    const refused = (why: string) => new SlipwayError("unauthorized", why);
    if (!integration) throw refused("Unknown integration, or signature not valid.");
    if (!integration.webhook_secret_sealed) throw refused("This integration has no webhook secret: install it again with one to receive pushes.");
    const secret = openSecret(deps.secretsKey, integration.webhook_secret_sealed, `integration:${integration.id}:webhook_secret`);
    const expected = `sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`;
    if (!signature || !sameText(signature, expected)) throw refused("X-Hub-Signature-256 is missing or does not match the body.");

    // Other events (ping, ...) are acknowledged once their signature holds.
    if (delivery.event !== "push") return { revisions: [] };
    let event: PushEvent;
    try {
      event = JSON.parse(raw.toString("utf8")) as PushEvent;
    } catch {
      throw new SlipwayError("bad_request", "The push event is not JSON.");
    }
    const branch = event.ref?.startsWith("refs/heads/") ? event.ref.slice(11) : undefined;
    if (!branch || event.deleted || !event.after || /^0+$/.test(event.after)) return { revisions: [] };
    const pushed = new Set(
      Object.values(event.repository ?? {})
        .filter((v): v is string => typeof v === "string")
        .map(repoKey),
    );
    const made: { deployment_id: string; revision_id: string }[] = [];
    for (const candidate of await pushDeployments(deps.db, integration.workspace_id, integration.id)) {
      if (!pushed.has(repoKey(candidate.repo_url))) continue;
      const revisionId = await deps.db.transaction(async (tx) => {
        const deployment = await lockDeployment(tx, integration.workspace_id, candidate.id);
        if (!deployment?.latest_revision_id) return undefined;
        const latest = await revisions.getRevision(tx, integration.workspace_id, candidate.id, deployment.latest_revision_id);
        const ref = latest?.source_revision_config.repo_ref;
        if (!latest || (ref !== branch && ref !== event.ref)) return undefined;
        const secrets = (await revisions.getSealedSecrets(tx, integration.workspace_id, latest.id))!;
        const now = deps.now();
        return this.revisions.enqueue(
          tx,
          deployment,
          {
            source: latest.source,
            sourceRevisionConfig: { ...latest.source_revision_config, repo_commit_sha: event.after!.toLowerCase() },
            resourceSpec: latest.resource_spec,
            secrets,
            secretReferences: latest.secret_references,
            trigger: "push",
            notBefore: new Date(now.getTime() + quietMs),
          },
          now.toISOString(),
        );
      });
      if (revisionId) made.push({ deployment_id: candidate.id, revision_id: revisionId });
    }
    return { revisions: made };
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
