import { createHash, createHmac, hkdfSync, randomUUID, timingSafeEqual } from "node:crypto";
import { createWriteStream, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { SlipwayError, badRequest, conflict, invalidField } from "../../http/errors.ts";
import { TarballRefused } from "../../tarball/tar-walk.ts";
import type { ControlPlaneDeps } from "../context.ts";
import { deploymentNotFound } from "../deployments/not-found.ts";
import { findDeployment } from "../deployments/repository.ts";
import * as repo from "./repository.ts";
import type { UploadUrl } from "./schemas.ts";

/** An upload whose body arrived: its file and what identifies it. */
interface ReceivedUpload {
  objectPath: string;
  file: string;
  sha256: string;
  sizeBytes: number | null;
}

const UPLOAD_URL_TTL_MS = 60 * 60 * 1000;
const MAX_UPLOAD_BYTES = 200 * 1024 * 1024;

/**
 * Sources uploaded from a local directory, as the vendor's `deploy` does: the client asks
 * for an upload URL, PUTs a .tar.gz there, then names its `object_path` in
 * `source_revision_config.source_tarball_path`. The URL carries its own credential (an
 * HMAC of the deployment, the upload and an expiry, under a key derived from the secrets
 * key), like a presigned storage URL: the PUT needs no API key, and the URL works once,
 * for one hour, for that deployment only.
 *
 * @example
 * const uploads = new UploadService(deps);
 * const { upload_url, object_path } = await uploads.createUrl(workspaceId, deploymentId);
 * await uploads.receive({ deploymentId, uploadId, expires, signature }, request.raw); // the signed PUT
 */
export class UploadService {
  /** `deps` is read at each call, not copied: `slipway up` fills in `publicUrl` once it listens. */
  constructor(private readonly deps: Pick<ControlPlaneDeps, "db" | "now" | "secretsKey" | "publicUrl" | "dataDir">) {}

  async createUrl(workspaceId: string, deploymentId: string): Promise<UploadUrl> {
    const { deps } = this;
    const deployment = await findDeployment(deps.db, workspaceId, deploymentId);
    if (!deployment) throw deploymentNotFound(deploymentId);
    if (deployment.source !== "internal_source") {
      throw badRequest(`Deployment ${deploymentId} builds from source '${deployment.source}'; uploads are for 'internal_source' deployments.`);
    }
    if (!deps.dataDir) throw new SlipwayError("unavailable", "This control plane has no data directory for uploads.");
    const uploadId = randomUUID();
    const objectPath = `uploads/${deploymentId}/${uploadId}.tar.gz`;
    await repo.insertUpload(deps.db, { objectPath, workspaceId, deploymentId, now: deps.now() });
    const expires = deps.now().getTime() + UPLOAD_URL_TTL_MS;
    const signature = sign(deps.secretsKey, deploymentId, uploadId, expires);
    const base = deps.publicUrl.replace(/\/+$/, "");
    return { upload_url: `${base}/v2/deployments/${deploymentId}/uploads/${uploadId}?expires=${expires}&signature=${signature}`, object_path: objectPath };
  }

  /**
   * Where a received upload of this deployment is stored, for the pipeline that unpacks
   * it; undefined when there is none by that path, or its body never arrived.
   */
  async received(workspaceId: string, deploymentId: string, objectPath: string): Promise<ReceivedUpload | undefined> {
    const { deps } = this;
    const upload = await repo.findUpload(deps.db, workspaceId, deploymentId, objectPath);
    if (!upload?.sha256 || upload.uploaded_at === null || !deps.dataDir) return undefined;
    return { objectPath: upload.object_path, file: join(deps.dataDir, upload.object_path), sha256: upload.sha256, sizeBytes: upload.size_bytes };
  }

  /**
   * Stores the body of a signed PUT: at most MAX_UPLOAD_BYTES (413 beyond), a gzipped tar
   * of regular files and folders only (422 naming the first entry refused otherwise).
   */
  async receive(
    target: { deploymentId: string; uploadId: string; expires: number; signature: string },
    body: Readable,
  ): Promise<{ object_path: string; size_bytes: number; sha256: string }> {
    const { deps } = this;
    const expected = sign(deps.secretsKey, target.deploymentId, target.uploadId, target.expires);
    if (!sameText(expected, target.signature))
      throw new SlipwayError("unauthorized", "The upload URL's signature is not valid for this deployment and upload.");
    if (target.expires < deps.now().getTime()) throw new SlipwayError("unauthorized", "The upload URL has expired: ask for a new one.");
    if (!deps.dataDir) throw new SlipwayError("unavailable", "This control plane has no data directory for uploads.");
    const objectPath = `uploads/${target.deploymentId}/${target.uploadId}.tar.gz`;
    const upload = await repo.findUploadByPath(deps.db, target.deploymentId, objectPath);
    if (!upload) throw new SlipwayError("not_found", `Upload ${target.uploadId} not found (its deployment may have been deleted).`);
    if (upload.uploaded_at !== null) throw conflict(`Upload ${target.uploadId} has already been received; ask for a new upload URL.`);

    const file = join(deps.dataDir, objectPath);
    const partial = `${file}.partial`;
    mkdirSync(dirname(file), { recursive: true });
    const hash = createHash("sha256");
    let size = 0;
    let tooLarge = false;
    try {
      await pipeline(
        body,
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            size += chunk.length;
            if (size > MAX_UPLOAD_BYTES) {
              tooLarge = true;
              throw new Error("too large");
            }
            hash.update(chunk);
            yield chunk;
          }
        },
        createWriteStream(partial),
      );
      if (size === 0) throw invalidField(["body"], "The upload is empty: PUT a .tar.gz of the project directory.", "missing");
      // node-tar is loaded at the first upload, not by every idle control plane (decision 0054).
      await (await import("../../tarball/tarball.ts")).checkTarball(partial);
    } catch (error) {
      rmSync(partial, { force: true });
      if (tooLarge) throw new SlipwayError("payload_too_large", `The upload is larger than ${MAX_UPLOAD_BYTES / 1024 / 1024} MB.`);
      if (error instanceof TarballRefused) throw invalidField(["body"], `The upload was refused: ${error.message}.`, "value_error");
      throw error;
    }
    renameSync(partial, file);
    const sha256 = hash.digest("hex");
    await repo.markUploaded(deps.db, objectPath, { sha256, sizeBytes: size, now: deps.now() });
    return { object_path: objectPath, size_bytes: size, sha256 };
  }
}

function sign(secretsKey: Buffer, deploymentId: string, uploadId: string, expires: number): string {
  const key = Buffer.from(hkdfSync("sha256", secretsKey, "", "slipway upload urls", 32));
  return createHmac("sha256", key).update(`${deploymentId}:${uploadId}:${expires}`).digest("base64url");
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
