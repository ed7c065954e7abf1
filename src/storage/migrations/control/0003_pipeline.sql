-- The revision pipeline: durable jobs on revisions, builds that later revisions reuse,
-- uploaded sources, and the logs of builds and of the agent processes.

-- A revision in flight is a job. The control plane process working on it holds a lease
-- (job_worker, job_lease_until) that it renews while it works; a lease that runs out
-- (the process died) lets another process, or the next start, take the job over with
-- job_attempts + 1. Status changes are fenced by worker and attempt, so a stale
-- process cannot move a revision it lost.
ALTER TABLE revisions ADD COLUMN job_worker text;
ALTER TABLE revisions ADD COLUMN job_lease_until timestamptz;
ALTER TABLE revisions ADD COLUMN job_attempts integer NOT NULL DEFAULT 0;
-- A waiting revision starts no earlier than this (pushes in quick succession build once).
ALTER TABLE revisions ADD COLUMN not_before timestamptz;
-- The build this revision runs (builds.key), once built.
ALTER TABLE revisions ADD COLUMN build_key text;
-- Why the revision exists: create, patch, redeploy of another revision, push.
ALTER TABLE revisions ADD COLUMN trigger text;

CREATE INDEX revisions_jobs_idx ON revisions (seq)
  WHERE status IN ('CREATING', 'AWAITING_BUILD', 'BUILDING', 'AWAITING_DEPLOY', 'DEPLOYING');

-- A build: a source tree at one commit (or one uploaded tarball) with its dependencies
-- installed. The key hashes everything that changes the result (source identity, lock
-- file, commands, Node major, config path), so a revision whose key exists reuses it.
CREATE TABLE builds (
  key text PRIMARY KEY,
  workspace_id uuid NOT NULL,
  deployment_id uuid NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
  -- The commit sha or the tarball's sha256; with config_path and commands, what a revision looks up.
  source_id text NOT NULL,
  recipe text NOT NULL,
  directory text NOT NULL,
  -- langgraph.json inside directory.
  config_file text NOT NULL,
  revision_id uuid NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX builds_source_idx ON builds (deployment_id, source_id, recipe);

-- Tarballs uploaded through POST /v2/deployments/{id}/upload-url.
CREATE TABLE uploads (
  object_path text PRIMARY KEY,
  workspace_id uuid NOT NULL,
  deployment_id uuid NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
  sha256 text,
  size_bytes bigint,
  created_at timestamptz NOT NULL,
  uploaded_at timestamptz
);

-- Build and deploy logs, per revision. Retention is bounded by the log writer (lines per
-- revision and type) and the sweeper (age).
CREATE TABLE revision_logs (
  seq bigserial PRIMARY KEY,
  workspace_id uuid NOT NULL,
  deployment_id uuid NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
  revision_id uuid NOT NULL REFERENCES revisions (id) ON DELETE CASCADE,
  type text NOT NULL CHECK (type IN ('build', 'deploy')),
  level text NOT NULL CHECK (level IN ('DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL')),
  message text NOT NULL,
  timestamp timestamptz NOT NULL
);
CREATE INDEX revision_logs_revision_idx ON revision_logs (revision_id, type, seq);
CREATE INDEX revision_logs_deployment_idx ON revision_logs (deployment_id, type, seq);

-- A deployment being deleted (AWAITING_DELETE, while its processes stop and its data goes)
-- no longer holds its name: a new deployment may take it at once.
ALTER TABLE deployments DROP CONSTRAINT deployments_workspace_id_name_key;
CREATE UNIQUE INDEX deployments_live_name ON deployments (workspace_id, name) WHERE status <> 'AWAITING_DELETE';
