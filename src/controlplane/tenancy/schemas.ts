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

const ApiKey = Type.Object(
  {
    id: Uuid(),
    prefix: Type.String({ description: "The key's public start (slw_<lookup>), to recognise it; the secret is never shown again." }),
    workspace_id: Nullable(Uuid(), { description: "Null for a key of the whole organization." }),
    description: Type.String(),
    created_at: DateTime(),
    revoked: Type.Boolean(),
  },
  { title: "ApiKey" },
);

export const ApiKeyList = Type.Object({ resources: Type.Array(ApiKey), offset: Nullable(Type.Integer()) }, { title: "ApiKeyList" });

export const ApiKeyCreateRequest = Type.Object(
  {
    description: Type.Optional(Type.String({ maxLength: 256 })),
    workspace_id: Type.Optional(
      Nullable(Uuid({ description: "The workspace the key serves; null or absent with an organization credential: the whole organization." })),
    ),
  },
  { additionalProperties: false, title: "ApiKeyCreateRequest" },
);

export const ApiKeyCreated = Type.Object(
  {
    api_key_id: Uuid(),
    api_key: Type.String({ description: "The key in full: shown once, stored only as a hash." }),
    organization_id: Uuid(),
    workspace_id: Nullable(Uuid()),
  },
  { title: "ApiKeyCreated" },
);

export const ApiKeyIdParams = Type.Object({ api_key_id: Uuid() });
