import { badRequest, invalidField } from "../../http/errors.ts";
import type { DeploymentRow, StoredSourceConfig } from "./repository.ts";
import { configPathProblem, repoRefProblem, repoUrlProblem } from "./source-fields.ts";
import type { DeploymentPatchRequest, DeploymentSource, SourceConfigRequest, SourceRevisionConfig, SourceRevisionConfigRequest } from "./schemas.ts";

/**
 * The vendor's per-source rules: "all fields are nullable, but are validated based on the
 * source". A null field means "not given", in a create and in a patch alike.
 */

const IMAGE: readonly DeploymentSource[] = ["external_docker", "internal_docker"];
const BUILT: readonly DeploymentSource[] = ["github", "internal_source"];

/** Which sources each field applies to; absent = every source. */
const SOURCE_CONFIG_APPLIES: Partial<Record<keyof SourceConfigRequest, readonly DeploymentSource[]>> = {
  integration_id: ["github"],
  repo_url: ["github"],
  custom_url: IMAGE,
  listener_id: IMAGE,
  listener_config: IMAGE,
  install_command: BUILT,
  build_command: BUILT,
};

type RevisionField = Exclude<keyof SourceRevisionConfig, "repo_commit_sha">;

const REVISION_CONFIG_APPLIES: Record<RevisionField, readonly DeploymentSource[]> = {
  repo_ref: ["github"],
  langgraph_config_path: BUILT,
  image_uri: IMAGE,
  source_tarball_path: ["internal_source"],
};

const REQUIRED_ON_CREATE: Record<DeploymentSource, ["source_config" | "source_revision_config", string][]> = {
  github: [
    ["source_config", "repo_url"],
    ["source_revision_config", "langgraph_config_path"],
  ],
  // The tarball is uploaded after creation, and named by a PATCH.
  internal_source: [["source_revision_config", "langgraph_config_path"]],
  external_docker: [["source_revision_config", "image_uri"]],
  internal_docker: [["source_revision_config", "image_uri"]],
};

/** Changing these after creation is refused with 400 (sending the current value back is fine). */
const IMMUTABLE_SOURCE_CONFIG = ["integration_id", "repo_url", "deployment_type", "listener_id", "listener_config"] as const;

export type RevisionConfigInput = Partial<Record<RevisionField, string>>;
export type SourceConfigInput = { [K in keyof SourceConfigRequest]?: NonNullable<SourceConfigRequest[K]> };

/** The non-null fields of a source_config. */
export function givenSourceConfig(input: SourceConfigRequest | null | undefined): SourceConfigInput {
  return Object.fromEntries(Object.entries(input ?? {}).filter(([, v]) => v !== null && v !== undefined)) as SourceConfigInput;
}

/** The non-null fields of a source_revision_config, with the `graph_config_path` alias folded in. */
export function givenRevisionConfig(input: SourceRevisionConfigRequest | null | undefined): RevisionConfigInput {
  const { graph_config_path: alias, ...rest } = input ?? {};
  const given = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== null && v !== undefined)) as RevisionConfigInput;
  if (alias != null) {
    if (given.langgraph_config_path !== undefined && given.langgraph_config_path !== alias) {
      throw invalidField(["body", "source_revision_config", "graph_config_path"], "Conflicts with langgraph_config_path; give one of them.");
    }
    given.langgraph_config_path = alias;
  }
  return given;
}

/** Refuses fields that do not apply to the deployment's source (422 at the field). */
export function checkApplicable(source: DeploymentSource, config: SourceConfigInput, revision: RevisionConfigInput, hasSecretReferences: boolean): void {
  for (const key of Object.keys(config) as (keyof SourceConfigInput)[]) {
    const applies = SOURCE_CONFIG_APPLIES[key];
    if (applies && !applies.includes(source)) throw notApplicable(["body", "source_config", key], source);
  }
  if (config.build_on_push === true && source !== "github") throw notApplicable(["body", "source_config", "build_on_push"], source);
  if (config.listener_config && !config.listener_id) {
    throw invalidField(["body", "source_config", "listener_config"], "Requires listener_id.");
  }
  for (const key of Object.keys(revision) as RevisionField[]) {
    if (!REVISION_CONFIG_APPLIES[key].includes(source)) throw notApplicable(["body", "source_revision_config", key], source);
  }
  if (hasSecretReferences && !IMAGE.includes(source)) throw notApplicable(["body", "secret_references"], source);
}

export function checkRequiredOnCreate(source: DeploymentSource, config: SourceConfigInput, revision: RevisionConfigInput): void {
  for (const [group, field] of REQUIRED_ON_CREATE[source]) {
    const given = group === "source_config" ? config[field as keyof SourceConfigInput] : revision[field as RevisionField];
    if (given === undefined || given === "") {
      throw invalidField(["body", group, field], `Field required for source '${source}'.`, "missing");
    }
  }
}

/** Refuses git-looking values git could misread or that leave the repository (source-fields.ts). */
export function checkSourceFields(config: SourceConfigInput, revision: RevisionConfigInput): void {
  const fields: [(string | number)[], string | undefined, (value: string) => string | undefined][] = [
    [["body", "source_config", "repo_url"], config.repo_url, repoUrlProblem],
    [["body", "source_revision_config", "repo_ref"], revision.repo_ref, repoRefProblem],
    [["body", "source_revision_config", "langgraph_config_path"], revision.langgraph_config_path, configPathProblem],
  ];
  for (const [loc, value, problemOf] of fields) {
    const problem = value === undefined ? undefined : problemOf(value);
    if (problem) throw invalidField(loc, problem);
  }
}

/** Tags never move, so building on push to one is refused (the vendor's rule). */
export function checkBuildOnPush(buildOnPush: boolean | null | undefined, repoRef: string | null | undefined, loc: (string | number)[]): void {
  if (buildOnPush && repoRef?.startsWith("refs/tags/")) {
    throw invalidField(loc, "build_on_push cannot be enabled when repo_ref is a tag (refs/tags/...): tags are immutable.");
  }
}

/** 400 for a patch that would change what cannot change. */
export function checkImmutable(current: DeploymentRow, patch: DeploymentPatchRequest): void {
  if (patch.name !== undefined && patch.name !== current.name) throw badRequest("name cannot be changed once the deployment is created.");
  if (patch.source !== undefined && patch.source !== current.source) {
    throw badRequest("source cannot be changed once the deployment is created.");
  }
  if (patch.revision_source != null && patch.revision_source !== current.source) {
    throw badRequest(`revision_source '${patch.revision_source}' differs from the deployment's source '${current.source}'; this is not supported.`);
  }
  const given = givenSourceConfig(patch.source_config);
  for (const key of IMMUTABLE_SOURCE_CONFIG) {
    if (given[key] === undefined) continue;
    if (canonical(key, given[key]) !== canonical(key, current.source_config[key] ?? null)) {
      throw badRequest(`source_config.${key} cannot be changed once the deployment is created.`);
    }
  }
}

/** The deployment's own settings after a create or a patch (ids lower-cased, defaults filled). */
export function storedSourceConfig(base: StoredSourceConfig | undefined, given: SourceConfigInput): StoredSourceConfig {
  const pick = <K extends keyof StoredSourceConfig>(key: K, fallback: StoredSourceConfig[K]) =>
    (given[key] as StoredSourceConfig[K] | undefined) ?? base?.[key] ?? fallback;
  return {
    integration_id: lower(pick("integration_id", null)),
    repo_url: pick("repo_url", null),
    deployment_type: pick("deployment_type", "dev"),
    build_on_push: pick("build_on_push", false),
    custom_url: pick("custom_url", null),
    listener_id: lower(pick("listener_id", null)),
    listener_config: pick("listener_config", null),
    install_command: pick("install_command", null),
    build_command: pick("build_command", null),
  };
}

/**
 * A patch makes a new revision when it changes what is built or how it runs:
 * source_revision_config, secrets, secret_references or resource_spec. build_on_push and
 * the other source_config settings alone do not (the vendor's rule).
 */
export function wantsNewRevision(patch: DeploymentPatchRequest, revision: RevisionConfigInput): boolean {
  return Object.keys(revision).length > 0 || patch.secrets != null || patch.secret_references != null || patch.source_config?.resource_spec != null;
}

function notApplicable(loc: (string | number)[], source: DeploymentSource) {
  return invalidField(loc, `Not applicable for source '${source}'.`);
}

function lower<T>(value: T): T {
  return (typeof value === "string" ? value.toLowerCase() : value) as T;
}

/** A comparable form: ids compare case-insensitively, objects ignore null fields and key order. */
function canonical(key: string, value: unknown): string {
  if (typeof value === "string") return JSON.stringify(key.endsWith("_id") ? value.toLowerCase() : value);
  if (value && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== null && v !== undefined);
    return entries.length === 0 ? "null" : JSON.stringify(entries.sort(([a], [b]) => a.localeCompare(b)));
  }
  return JSON.stringify(value ?? null);
}

/**
 * Sleeping stops a deployment's local processes and starts them again on demand; the
 * Docker runtime does not do it (yet): a setting that would make it sleep is refused
 * there rather than stored and ignored. 0 (never) is accepted everywhere.
 */
export function checkSleepSetting(minutes: number | null | undefined, containerRuntime: boolean): void {
  if (minutes && containerRuntime) {
    throw invalidField(
      ["body", "slipway_sleep_after_minutes"],
      "Deployments do not sleep on the Docker runtime (`slipway up --runtime docker`): give 0 or null, or run the control plane with the local runtime.",
    );
  }
}
