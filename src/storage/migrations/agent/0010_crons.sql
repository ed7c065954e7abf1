-- Crons: schedules that queue runs (src/agentserver/crons/).

CREATE TABLE crons (
  cron_id uuid PRIMARY KEY,
  assistant_id uuid NOT NULL REFERENCES assistants ON DELETE CASCADE,
  -- NULL: each firing runs on a new thread (a "stateless" cron).
  thread_id uuid REFERENCES threads ON DELETE CASCADE,
  user_id text,
  schedule text NOT NULL,
  timezone text,
  end_time timestamptz,
  enabled boolean NOT NULL DEFAULT true,
  -- Stateless crons: 'delete' (each run's thread goes when the run ends) or 'keep'.
  on_run_completed text,
  -- The run fields of each firing, as the client gave them.
  payload jsonb NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  -- The firing due next; NULL when there is none (past end_time, or a date that never comes).
  -- Advanced in the transaction that queues a firing's run: see claimDueCron.
  next_run_date timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX crons_due ON crons (next_run_date) WHERE enabled AND next_run_date IS NOT NULL;
CREATE INDEX crons_thread ON crons (thread_id) WHERE thread_id IS NOT NULL;
CREATE INDEX crons_assistant ON crons (assistant_id);
CREATE INDEX crons_created_at ON crons (created_at);

-- One row per firing, written with its run: the last fence against firing a time twice
-- (the primary key) and the record of what each firing did. Kept for a day.
CREATE TABLE cron_firings (
  cron_id uuid NOT NULL REFERENCES crons ON DELETE CASCADE,
  scheduled_for timestamptz NOT NULL,
  -- 'queued' (run_id says which run) or 'rejected' (the thread was busy under "reject").
  outcome text NOT NULL,
  run_id uuid,
  -- Set when firings missed for longer than the catch-up window were folded into this
  -- one: every scheduled time up to here.
  coalesced_until timestamptz,
  fired_by text NOT NULL,
  fired_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cron_id, scheduled_for)
);
