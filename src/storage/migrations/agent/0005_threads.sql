-- Threads: what the threads API (src/agentserver/threads) needs beyond 0001.

-- When the thread's state (values, interrupts, status after a run) last changed;
-- `updated_at` also moves on metadata patches. Searchable by sort_by=state_updated_at.
ALTER TABLE threads ADD COLUMN state_updated_at timestamptz NOT NULL DEFAULT now();

-- POST /threads/search and /threads/count filter with `metadata @> $filter` and
-- `"values" @> $filter`; jsonb_path_ops indexes serve exactly that operator.
CREATE INDEX threads_metadata ON threads USING gin (metadata jsonb_path_ops);
CREATE INDEX threads_values ON threads USING gin ("values" jsonb_path_ops);
CREATE INDEX threads_updated_at ON threads (updated_at);
