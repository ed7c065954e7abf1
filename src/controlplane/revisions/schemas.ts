import { Type, type Static } from "@sinclair/typebox";
import { DEPLOYMENT_SOURCES, SourceRevisionConfig } from "../deployments/schemas.ts";
import { DateTime, Nullable, PageOf, PageQuery, StringEnum, Uuid } from "../deployments/wire.ts";
import { REVISION_STATUSES } from "./state-machine.ts";

export const Revision = Type.Object(
  {
    id: Uuid(),
    deployment_id: Uuid(),
    created_at: DateTime(),
    updated_at: DateTime(),
    status: StringEnum(REVISION_STATUSES, { description: "DEPLOYED when serving; any status containing FAILED is a failure." }),
    status_message: Nullable(Type.String(), { description: "Why the revision is in its status (failure reason, who interrupted it, ...)." }),
    source: StringEnum(DEPLOYMENT_SOURCES),
    source_revision_config: SourceRevisionConfig,
  },
  { title: "Revision" },
);
export type Revision = Static<typeof Revision>;

export const RevisionsList = PageOf(Revision, "RevisionsList");

export const RevisionListQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(Type.String({ description: `Comma separated list of revision statuses (${REVISION_STATUSES.join(", ")}).` })),
  remote_reconciled: Type.Optional(Type.Boolean({ description: "true: only revisions of listener (remote) deployments; false: only local ones." })),
});
export type RevisionListQuery = Static<typeof RevisionListQuery>;

export const RevisionParams = Type.Object({
  deployment_id: Uuid({ title: "Deployment ID" }),
  revision_id: Uuid({ title: "Revision ID" }),
});
