import { Type, type Static } from "@sinclair/typebox";
import { MAX_SLEEP_AFTER_MINUTES } from "../../config/pipeline.ts";
import { SECRET_NAME_PATTERN } from "../secrets/reserved.ts";
import { ResourceSpec } from "./resource-spec.ts";
import { DateTime, Nullable, PageOf, PageQuery, StringEnum, Uuid } from "./wire.ts";

/** One schema per record: the validator, the TypeScript type and the OpenAPI all come from here. */

export const DEPLOYMENT_SOURCES = ["github", "external_docker", "internal_docker", "internal_source"] as const;
export type DeploymentSource = (typeof DEPLOYMENT_SOURCES)[number];
const DEPLOYMENT_TYPES = ["dev_free", "dev", "prod"] as const;
export type DeploymentType = (typeof DEPLOYMENT_TYPES)[number];
export const DEPLOYMENT_STATUSES = ["AWAITING_DATABASE", "READY", "UNUSED", "AWAITING_DELETE", "UNKNOWN"] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

const text = (description: string) => Type.Optional(Nullable(Type.String({ maxLength: 4096 }), { description }));

const ListenerConfig = Type.Object(
  { k8s_namespace: text("Kubernetes namespace the deployment goes to (listener deployments only; cannot change).") },
  { additionalProperties: false, title: "ListenerConfig" },
);

/** Fields that do not need a new revision when changed, or cannot be changed at all. */
const sourceConfigFields = {
  integration_id: Type.Optional(Nullable(Uuid(), { description: "Repository integration (github source). Cannot change." })),
  repo_url: text("URL of the git repository (github source). Cannot change."),
  deployment_type: Type.Optional(Nullable(StringEnum(DEPLOYMENT_TYPES), { description: "Cannot change." })),
  build_on_push: Type.Optional(Nullable(Type.Boolean(), { description: "Build a new revision on push to repo_ref." })),
  custom_url: text("Custom URL (external_docker source only)."),
  resource_spec: Type.Optional(Nullable(ResourceSpec)),
  listener_id: Type.Optional(Nullable(Uuid(), { description: "Listener (external_docker source). Cannot change." })),
  listener_config: Type.Optional(Nullable(ListenerConfig)),
  install_command: text("Custom install command (JS deployments)."),
  build_command: text("Custom build command (JS deployments)."),
};

export const SourceConfigRequest = Type.Object(sourceConfigFields, { additionalProperties: false, title: "SourceConfigRequest" });
export type SourceConfigRequest = Static<typeof SourceConfigRequest>;
export const SourceConfig = Type.Object(sourceConfigFields, { title: "SourceConfig" });
export type SourceConfig = Static<typeof SourceConfig>;

const sourceRevisionFields = {
  repo_ref: text("Git ref: a branch name, or refs/tags/<tag>. Non-null in a PATCH makes a new revision."),
  langgraph_config_path: text("Path of langgraph.json in the repository. Non-null in a PATCH makes a new revision."),
  image_uri: text("Docker image (image sources). Non-null in a PATCH makes a new revision."),
  source_tarball_path: text("Uploaded source tarball (internal_source). Non-null in a PATCH makes a new revision."),
};

export const SourceRevisionConfigRequest = Type.Object(
  {
    ...sourceRevisionFields,
    // The mission spec's neutral name for langgraph_config_path; accepted as an alias on input.
    graph_config_path: text("Alias of langgraph_config_path."),
  },
  { additionalProperties: false, title: "SourceRevisionConfigRequest" },
);
export type SourceRevisionConfigRequest = Static<typeof SourceRevisionConfigRequest>;

export const SourceRevisionConfig = Type.Object(
  { ...sourceRevisionFields, repo_commit_sha: text("Commit the revision was built from (read-only).") },
  { title: "SourceRevisionConfig" },
);
export type SourceRevisionConfig = Static<typeof SourceRevisionConfig>;

export const SecretInput = Type.Object(
  {
    name: Type.String({ pattern: SECRET_NAME_PATTERN, maxLength: 256, description: "Environment variable name." }),
    value: Type.String({ maxLength: 64 * 1024, description: "Value; stored encrypted and never returned." }),
  },
  { additionalProperties: false, title: "Secret" },
);
export type SecretInput = Static<typeof SecretInput>;

/** What a deployment shows of a secret: its name. Values are write-only. */
const SecretName = Type.Object({ name: Type.String() }, { title: "SecretName" });

export const SecretReference = Type.Object(
  { name: Type.String({ pattern: SECRET_NAME_PATTERN }), secret_name: Type.String(), secret_key: Type.String() },
  { additionalProperties: false, title: "SecretReference" },
);
export type SecretReference = Static<typeof SecretReference>;

const secretsField = Type.Array(SecretInput, { maxItems: 500 });

/**
 * Slipway's own field (not the vendor's; prefixed so that a field the vendor adds later
 * cannot clash): minutes without requests, runs or a cron due before the deployment's
 * processes stop (docs/decisions/0039). 0: never; null or absent: the control plane's
 * default (`slipway up --sleep-after`, off unless set).
 */
const sleepAfterField = Nullable(Type.Integer({ minimum: 0, maximum: MAX_SLEEP_AFTER_MINUTES }), {
  description:
    "Slipway extension. Minutes without requests, pending or running runs, or a cron due within a minute, after which the deployment's processes stop " +
    "until the next request (held while they start), cron or delayed run. 0: never sleeps; null: the control plane's default (`slipway up --sleep-after`). " +
    "Not available on the Docker runtime. Changing it makes no new revision.",
});
const secretReferencesField = Nullable(Type.Array(SecretReference, { maxItems: 500 }));

export const DeploymentCreateRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, pattern: "\\S", description: "Name of the deployment; unique in the workspace." }),
    source: StringEnum(DEPLOYMENT_SOURCES),
    source_config: SourceConfigRequest,
    source_revision_config: SourceRevisionConfigRequest,
    secrets: Type.Optional(secretsField),
    secret_references: Type.Optional(secretReferencesField),
    slipway_sleep_after_minutes: Type.Optional(sleepAfterField),
  },
  { additionalProperties: false, title: "DeploymentCreateRequest" },
);
export type DeploymentCreateRequest = Static<typeof DeploymentCreateRequest>;

export const DeploymentPatchRequest = Type.Object(
  {
    // name and source cannot change; they are accepted so that a client sending them back
    // unchanged works, and a different value is refused with 400.
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    source: Type.Optional(StringEnum(DEPLOYMENT_SOURCES)),
    revision_source: Type.Optional(Nullable(StringEnum(["github", "internal_docker", "internal_source"] as const))),
    source_config: Type.Optional(Nullable(SourceConfigRequest)),
    source_revision_config: Type.Optional(Nullable(SourceRevisionConfigRequest)),
    secrets: Type.Optional(Nullable(secretsField)),
    secret_references: Type.Optional(secretReferencesField),
    slipway_sleep_after_minutes: Type.Optional(sleepAfterField),
  },
  { additionalProperties: false, title: "DeploymentPatchRequest" },
);
export type DeploymentPatchRequest = Static<typeof DeploymentPatchRequest>;

export const Deployment = Type.Object(
  {
    id: Uuid(),
    tenant_id: Uuid({ description: "The workspace that owns the deployment." }),
    name: Type.String(),
    source: StringEnum(DEPLOYMENT_SOURCES),
    source_config: SourceConfig,
    source_revision_config: SourceRevisionConfig,
    secrets: Type.Array(SecretName, { description: "Names of the deployment's secrets; values are never returned." }),
    secret_references: Nullable(Type.Array(SecretReference)),
    created_at: DateTime(),
    updated_at: DateTime(),
    status: StringEnum(DEPLOYMENT_STATUSES),
    latest_revision_id: Nullable(Uuid()),
    active_revision_id: Nullable(Uuid(), { description: "The revision serving traffic; moves only when a revision is DEPLOYED." }),
    image_version: Nullable(Type.String()),
    url: Type.String({ description: "Where the deployment's agent server is reached." }),
    slipway_sleep_after_minutes: Nullable(Type.Integer(), {
      description: "Slipway extension: the deployment's sleep setting as given (null: the control plane's default).",
    }),
    slipway_sleeping: Type.Boolean({
      description:
        "Slipway extension: true while the deployment sleeps (its processes are stopped; the next request, cron or delayed run starts them). Its revision stays DEPLOYED.",
    }),
    slipway_sleeping_since: Nullable(DateTime(), { description: "Slipway extension: when it fell asleep (null while awake)." }),
  },
  { title: "Deployment" },
);
export type Deployment = Static<typeof Deployment>;

export const DeploymentsList = PageOf(Deployment, "DeploymentsList");

export const DeploymentListQuery = Type.Object({
  ...PageQuery,
  name_contains: Type.Optional(Type.String({ description: "Substring of the name (case-insensitive)." })),
  status: Type.Optional(StringEnum(DEPLOYMENT_STATUSES)),
  remote_reconciled: Type.Optional(Type.Boolean({ description: "true: only listener (remote) deployments; false: only local ones." })),
  tag_value_ids: Type.Optional(Type.String({ description: "Comma separated tag value ids. Deployments carry no tags here, so any id matches none." })),
  image_version: Type.Optional(Type.String()),
  deployment_type: Type.Optional(StringEnum(DEPLOYMENT_TYPES)),
  deployment_ids: Type.Optional(Type.String({ description: "Comma separated deployment ids." })),
});
export type DeploymentListQuery = Static<typeof DeploymentListQuery>;

export const DeploymentIdParams = Type.Object({ deployment_id: Uuid({ title: "Deployment ID" }) });

export const BulkDeleteQuery = Type.Object({
  deployment_ids: Type.Array(Uuid(), { minItems: 1, maxItems: 100, description: "Repeat the parameter for each id." }),
});

export const BulkDeleteResult = Type.Object(
  {
    deleted_deployment_ids: Type.Array(Uuid()),
    failed: Type.Array(Type.Object({ deployment_id: Uuid(), detail: Type.String() })),
  },
  { title: "DeploymentsDeleteResult", description: "200 when every deployment was deleted, 207 when some were not." },
);
