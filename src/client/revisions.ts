import type { Static } from "@sinclair/typebox";
import type { Deployment } from "../controlplane/deployments/schemas.ts";
import type { Revision, RevisionListQuery, RevisionsList } from "../controlplane/revisions/schemas.ts";
import type { Transport } from "./transport.ts";

/** /v2/deployments/{id}/revisions. */
export function revisionsApi(http: Transport) {
  const at = (deploymentId: string) => `/v2/deployments/${encodeURIComponent(deploymentId)}/revisions`;
  return {
    list: (deploymentId: string, query: RevisionListQuery = {}) =>
      http.json<Static<typeof RevisionsList>>({ method: "GET", path: at(deploymentId), query: { ...query } }),
    get: (deploymentId: string, revisionId: string) => http.json<Revision>({ method: "GET", path: `${at(deploymentId)}/${encodeURIComponent(revisionId)}` }),
    /** Not retried: each call makes a revision. Answers the deployment (its latest_revision_id is the new one). */
    redeploy: (deploymentId: string, revisionId: string) =>
      http.json<Deployment>({ method: "POST", path: `${at(deploymentId)}/${encodeURIComponent(revisionId)}/redeploy` }),
    /** Not retried: a second call on a revision already stopped answers 409. */
    interrupt: (deploymentId: string, revisionId: string) =>
      http.json<Revision>({ method: "POST", path: `${at(deploymentId)}/${encodeURIComponent(revisionId)}/interrupt` }),
  };
}
