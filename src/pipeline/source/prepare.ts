import type { PipelineDeps } from "../context.ts";
import { StepFailure } from "../failure.ts";
import type { LogWriter } from "../log-writer.ts";
import { fetchCommit, resolveCommit, type GitSource } from "./git.ts";
import { TarballRefused } from "../../tarball/tar-walk.ts";

/** Where a revision's source comes from, as its snapshot says. */
export type RevisionSource =
  | { kind: "git"; workspaceId: string; deploymentId: string; url: string; ref: string; commit: string | null; integrationId: string | null }
  | { kind: "tarball"; workspaceId: string; deploymentId: string; objectPath: string };

/** What preparing a source needs: the uploads, the integrations (a git host's credentials) and the hosts fetches may reach. */
export type SourceDeps = Pick<PipelineDeps, "services" | "gitHosts">;

interface SourceContext {
  log: LogWriter;
  signal: AbortSignal;
}

/**
 * The identity of the source, without fetching it: the commit a git ref names now (or
 * the commit the revision already recorded), or the sha256 of the uploaded tarball.
 * Two revisions with the same identity and build recipe share a build.
 */
export async function identifySource(deps: SourceDeps, source: RevisionSource, context: SourceContext): Promise<string> {
  if (source.kind === "tarball") return (await uploadedFile(deps, source)).sha256;
  if (source.commit) return source.commit;
  context.log.info(`Resolving ${source.ref} in ${source.url}.`);
  return resolveCommit(await gitSource(deps, source), { ...context, gitHosts: deps.gitHosts });
}

/** Puts the source tree at `sourceId` into `dir`. */
export async function fetchSource(deps: SourceDeps, source: RevisionSource, sourceId: string, dir: string, context: SourceContext): Promise<void> {
  if (source.kind === "tarball") {
    const upload = await uploadedFile(deps, source);
    context.log.info(`Unpacking the uploaded source ${source.objectPath} (${upload.sizeBytes} bytes, sha256 ${upload.sha256.slice(0, 12)}).`);
    try {
      // node-tar is loaded by the first upload unpacked, not by every control plane at start.
      await (await import("../../tarball/tarball.ts")).unpackTarball(upload.file, dir);
    } catch (error) {
      if (error instanceof TarballRefused) throw new StepFailure("CREATE_FAILED", `Unpacking the uploaded source failed: ${error.message}.`);
      throw error;
    }
    return;
  }
  context.log.info(`Fetching ${source.url} at ${sourceId}.`);
  await fetchCommit(await gitSource(deps, source), sourceId, dir, { ...context, gitHosts: deps.gitHosts });
}

async function gitSource(deps: SourceDeps, source: Extract<RevisionSource, { kind: "git" }>): Promise<GitSource> {
  if (!source.integrationId) return { url: source.url, ref: source.ref };
  const credentials = await deps.services.integrations.credentials(source.workspaceId, source.integrationId).catch(() => undefined);
  if (!credentials) {
    throw new StepFailure("CREATE_FAILED", `Fetching the source failed: integration ${source.integrationId} no longer exists in this workspace.`);
  }
  return { url: source.url, ref: source.ref, integration: { baseUrl: credentials.baseUrl, token: credentials.token } };
}

async function uploadedFile(deps: SourceDeps, source: Extract<RevisionSource, { kind: "tarball" }>) {
  const upload = await deps.services.uploads.received(source.workspaceId, source.deploymentId, source.objectPath);
  if (!upload) {
    throw new StepFailure(
      "CREATE_FAILED",
      `The uploaded source ${source.objectPath} was not found for this deployment: ask POST /v2/deployments/${source.deploymentId}/upload-url for a URL, PUT the .tar.gz there, then use its object_path.`,
    );
  }
  return upload;
}
