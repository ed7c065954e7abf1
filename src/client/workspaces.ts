import type { Static } from "@sinclair/typebox";
import type { WorkspaceList } from "../controlplane/tenancy/schemas.ts";
import type { Transport } from "./transport.ts";

/** /v2/workspaces: the workspaces the credential reaches (no X-Tenant-Id needed). */
export function workspacesApi(http: Transport) {
  return {
    list: () => http.json<Static<typeof WorkspaceList>>({ method: "GET", path: "/v2/workspaces" }),
  };
}
