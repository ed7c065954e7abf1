import { Type } from "@sinclair/typebox";
import { DateTime, Nullable, Uuid } from "../deployments/wire.ts";

const Workspace = Type.Object({ id: Uuid(), name: Type.String(), created_at: DateTime() }, { title: "Workspace" });

export const WorkspaceList = Type.Object(
  {
    resources: Type.Array(Workspace),
    organization_id: Uuid(),
    scope: Type.Union([Type.Literal("organization"), Type.Literal("workspace")], {
      description: "organization: the credential reaches every workspace listed (send X-Tenant-Id); workspace: only its own.",
    }),
    offset: Nullable(Type.Integer()),
  },
  { title: "WorkspaceList" },
);
