import type { ControlPlaneClient } from "../../client/index.ts";
import { ControlPlaneError } from "../../client/index.ts";
import type { Deployment } from "../../controlplane/deployments/schemas.ts";
import type { GithubIntegration } from "../../controlplane/integrations/schemas.ts";
import { CliFailure } from "./exit.ts";
import { cliName } from "./invocation.ts";

/** Commands name deployments and integrations by id or by name, as people remember them. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isUuid = (text: string) => UUID.test(text);

/** Every deployment of the workspace whose name contains `text`, all pages. */
export function listDeployments(client: ControlPlaneClient, query: { name_contains?: string; status?: Deployment["status"] } = {}): Promise<Deployment[]> {
  return allPages((offset) => client.deployments.list({ ...query, limit: PAGE, offset }));
}

const PAGE = 100;

/** Every resource of a listing, page by page (`offset` in each answer is where the next starts). */
async function allPages<T>(page: (offset: number) => Promise<{ resources: T[]; offset: number }>): Promise<T[]> {
  const all: T[] = [];
  for (let offset = 0; ; ) {
    const answer = await page(offset);
    all.push(...answer.resources);
    if (answer.resources.length < PAGE) return all;
    offset = answer.offset;
  }
}

/** The deployment named exactly `name`, or undefined. */
export async function deploymentNamed(client: ControlPlaneClient, name: string): Promise<Deployment | undefined> {
  return (await listDeployments(client, { name_contains: name })).find((d) => d.name === name);
}

export async function findDeployment(client: ControlPlaneClient, idOrName: string): Promise<Deployment> {
  if (isUuid(idOrName)) {
    try {
      return await client.deployments.get(idOrName);
    } catch (error) {
      if (!(error instanceof ControlPlaneError && error.status === 404)) throw error;
    }
  }
  const named = await deploymentNamed(client, idOrName);
  if (!named) throw new CliFailure(`no deployment named or with id '${idOrName}' in this workspace (\`${cliName()} deployments list\` shows them)`);
  return named;
}

/**
 * A revision argument: an id, the start of one as logs and the console show it (`1a2b3c4d`
 * from a process named `1a2b3c4d#1`), `latest` (the default) or `active` (the one serving).
 */
export async function revisionOf(client: ControlPlaneClient, deployment: Deployment, arg: string | undefined): Promise<string> {
  if (arg === undefined || arg === "latest") {
    if (!deployment.latest_revision_id) throw new CliFailure(`deployment '${deployment.name}' has no revision yet`);
    return deployment.latest_revision_id;
  }
  if (arg === "active") {
    if (!deployment.active_revision_id) throw new CliFailure(`deployment '${deployment.name}' has no revision serving (none is DEPLOYED)`);
    return deployment.active_revision_id;
  }
  if (isUuid(arg)) return arg.toLowerCase();
  if (!/^[0-9a-f-]{4,35}$/i.test(arg)) {
    throw new CliFailure(`'${arg}' is not a revision id: give an id, its first characters (at least 4), \`latest\` or \`active\``);
  }
  const prefix = arg.toLowerCase();
  const matches = (await listRevisionIds(client, deployment.id)).filter((id) => id.startsWith(prefix));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0)
    throw new CliFailure(
      `no revision of deployment '${deployment.name}' has an id starting with '${arg}' (\`${cliName()} revisions list ${deployment.name}\` shows them)`,
    );
  throw new CliFailure(`'${arg}' starts ${matches.length} revision ids of deployment '${deployment.name}' (${matches.join(", ")}): give more of it`);
}

/** Every revision id of a deployment, all pages. */
async function listRevisionIds(client: ControlPlaneClient, deploymentId: string): Promise<string[]> {
  const revisions = await allPages((offset) => client.revisions.list(deploymentId, { limit: PAGE, offset }));
  return revisions.map((revision) => revision.id);
}

export async function findIntegration(client: ControlPlaneClient, idOrName: string): Promise<GithubIntegration> {
  const all = await client.integrations.list();
  const found = all.find((i) => i.id === idOrName.toLowerCase()) ?? all.find((i) => i.name === idOrName);
  if (!found) {
    const names = all.map((i) => i.name).join(", ") || `none yet: add one with \`${cliName()} integrations add\``;
    throw new CliFailure(`no integration named or with id '${idOrName}' in this workspace (integrations: ${names})`);
  }
  return found;
}
