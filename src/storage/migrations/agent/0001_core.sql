-- Assistants, threads and runs of one agent server.

CREATE TABLE assistants (
  assistant_id uuid PRIMARY KEY,
  graph_id text NOT NULL,
  name text NOT NULL,
  description text,
  config jsonb NOT NULL DEFAULT '{}',
  context jsonb NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX assistants_graph_id ON assistants (graph_id);

-- Every version an assistant ever had; `assistants` holds the one in use.
CREATE TABLE assistant_versions (
  assistant_id uuid NOT NULL REFERENCES assistants ON DELETE CASCADE,
  version integer NOT NULL,
  graph_id text NOT NULL,
  name text NOT NULL,
  description text,
  config jsonb NOT NULL DEFAULT '{}',
  context jsonb NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (assistant_id, version)
);

CREATE TABLE threads (
  thread_id uuid PRIMARY KEY,
  status text NOT NULL DEFAULT 'idle',
  metadata jsonb NOT NULL DEFAULT '{}',
  config jsonb NOT NULL DEFAULT '{}',
  "values" jsonb,
  interrupts jsonb NOT NULL DEFAULT '{}',
  error jsonb,
  -- Threads made for stateless runs are hidden from search and removed with their run.
  temporary boolean NOT NULL DEFAULT false,
  ttl jsonb,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX threads_created_at ON threads (created_at);
CREATE INDEX threads_expires_at ON threads (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE runs (
  run_id uuid PRIMARY KEY,
  -- Arrival order: queued runs of a thread execute in this order.
  seq bigserial NOT NULL UNIQUE,
  thread_id uuid NOT NULL REFERENCES threads ON DELETE CASCADE,
  assistant_id uuid NOT NULL,
  status text NOT NULL DEFAULT 'pending',
  metadata jsonb NOT NULL DEFAULT '{}',
  kwargs jsonb NOT NULL DEFAULT '{}',
  multitask_strategy text NOT NULL DEFAULT 'enqueue',
  error jsonb,
  attempt integer NOT NULL DEFAULT 0,
  available_at timestamptz NOT NULL DEFAULT now(),
  lease_owner text,
  lease_expires_at timestamptz,
  -- Set when a cancel arrives: interrupt | rollback.
  cancel_action text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- The fence behind "one running run per thread": a second claimer fails here.
CREATE UNIQUE INDEX runs_one_running_per_thread ON runs (thread_id) WHERE status = 'running';
CREATE INDEX runs_pending_by_seq ON runs (seq) WHERE status = 'pending';
CREATE INDEX runs_thread_created ON runs (thread_id, created_at DESC);
CREATE INDEX runs_running_lease ON runs (lease_expires_at) WHERE status = 'running';

-- Output of resumable runs, replayed to clients that reconnect with Last-Event-ID.
CREATE TABLE run_events (
  run_id uuid NOT NULL,
  seq integer NOT NULL,
  event text NOT NULL,
  data jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, seq)
);
