-- Deployments, their revisions, and listeners.
-- workspace_id is a plain uuid (no foreign key to workspaces): this feature only relies on
-- the tenant id the auth hook hands it, and every query filters on it, so a row of another
-- workspace answers 404 exactly like a missing one.
-- `seq` gives a total creation order that does not depend on the injected clock
-- (tests pin time, so created_at ties are normal).

CREATE TABLE deployments (
  seq bigserial UNIQUE,
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL,
  name text NOT NULL,
  source text NOT NULL CHECK (source IN ('github', 'external_docker', 'internal_docker', 'internal_source')),
  -- The SourceConfig record (integration, repo_url, deployment_type, build_on_push, resource_spec, ...).
  source_config jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('AWAITING_DATABASE', 'READY', 'UNUSED', 'AWAITING_DELETE', 'UNKNOWN')),
  -- No foreign keys to revisions: the two tables point at each other; the cascade below cleans up.
  latest_revision_id uuid,
  active_revision_id uuid,
  image_version text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (workspace_id, name)
);
CREATE INDEX deployments_workspace_idx ON deployments (workspace_id, seq DESC);

-- A revision is a snapshot of everything that needs a build or a restart: the source revision
-- config, resource spec and secrets as they were when it was made, so the pipeline builds
-- exactly what was asked even if the deployment is patched meanwhile.
-- Secret values live only in secrets_sealed ({name: AES-256-GCM sealed value}, bound to the
-- deployment id); API reads select secret_names and never touch secrets_sealed.
CREATE TABLE revisions (
  seq bigserial UNIQUE,
  id uuid PRIMARY KEY,
  deployment_id uuid NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL,
  status text NOT NULL CHECK (status IN (
    'CREATING', 'QUEUED', 'AWAITING_BUILD', 'BUILDING', 'AWAITING_DEPLOY', 'DEPLOYING',
    'CREATE_FAILED', 'BUILD_FAILED', 'DEPLOY_FAILED', 'DEPLOYED', 'SKIPPED', 'INTERRUPTED', 'UNKNOWN')),
  status_message text,
  source text NOT NULL,
  source_revision_config jsonb NOT NULL,
  resource_spec jsonb,
  secret_names jsonb NOT NULL DEFAULT '[]',
  secrets_sealed jsonb NOT NULL DEFAULT '{}',
  secret_references jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX revisions_deployment_idx ON revisions (deployment_id, seq DESC);

-- One revision in flight per deployment, enforced by the database as well as by
-- revisions/state-machine.ts: a bug or a race in the service fails loudly instead of
-- building two revisions at once. Keep this list equal to IN_FLIGHT there.
CREATE UNIQUE INDEX revisions_one_in_flight ON revisions (deployment_id)
  WHERE status IN ('CREATING', 'AWAITING_BUILD', 'BUILDING', 'AWAITING_DEPLOY', 'DEPLOYING');

CREATE TABLE listeners (
  seq bigserial UNIQUE,
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL,
  version text,
  compute_type text NOT NULL CHECK (compute_type IN ('k8s')),
  compute_id text NOT NULL,
  compute_config jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  -- The vendor's rule: a listener is unique per (workspace, compute_id); a second one is 409.
  UNIQUE (workspace_id, compute_id)
);
