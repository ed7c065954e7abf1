-- The outcome of a stateless run whose thread (and so its run row) was removed when it
-- ended. A /runs/wait caller in another process, woken by the "run done" notification,
-- reads it here. Rows are short-lived: the agent server deletes them after ten minutes.
CREATE TABLE run_results (
  run_id uuid PRIMARY KEY,
  status text NOT NULL,
  "values" jsonb,
  error jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX run_results_created_at ON run_results (created_at);
