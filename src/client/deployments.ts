import type { Static } from "@sinclair/typebox";
import type {
  BulkDeleteResult,
  Deployment,
  DeploymentCreateRequest,
  DeploymentListQuery,
  DeploymentPatchRequest,
  DeploymentsList,
} from "../controlplane/deployments/schemas.ts";
import type { UploadReceived, UploadUrl } from "../controlplane/uploads/schemas.ts";
import type { Transport } from "./transport.ts";

/** /v2/deployments and its upload URLs. */
export function deploymentsApi(http: Transport) {
  const at = (id: string) => `/v2/deployments/${encodeURIComponent(id)}`;
  return {
    list: (query: DeploymentListQuery = {}) => http.json<Static<typeof DeploymentsList>>({ method: "GET", path: "/v2/deployments", query: { ...query } }),
    get: (id: string) => http.json<Deployment>({ method: "GET", path: at(id) }),
    /** Not retried: a lost answer followed by a retry would meet its own name (409). */
    create: (body: DeploymentCreateRequest) => http.json<Deployment>({ method: "POST", path: "/v2/deployments", body }),
    /** Not retried: a patch may make a revision, and a second one would make another. */
    update: (id: string, body: DeploymentPatchRequest) => http.json<Deployment>({ method: "PATCH", path: at(id), body }),
    /** Not retried: each call makes a revision. Answers the deployment (its latest_revision_id is the rotation's revision). */
    rotateCredentials: (id: string) => http.json<Deployment>({ method: "POST", path: `${at(id)}/rotate-credentials` }),
    delete: (id: string) => http.json<void>({ method: "DELETE", path: at(id) }),
    deleteMany: (ids: readonly string[]) =>
      http.json<Static<typeof BulkDeleteResult>>({ method: "DELETE", path: "/v2/deployments", query: { deployment_ids: ids } }),
    /** Safe to repeat: each call only reserves another upload slot, which expires unused. */
    uploadUrl: (id: string) => http.json<UploadUrl>({ method: "POST", path: `${at(id)}/upload-url`, idempotent: true }),
    /** PUTs a .tar.gz to an upload URL (signed: no key is sent). */
    upload: (uploadUrl: string, tarball: Uint8Array<ArrayBuffer>, signal?: AbortSignal) =>
      http.putBytes<UploadReceived>(uploadUrl, tarball, "application/gzip", signal),
  };
}
