-- A run created while its process has a free worker and its thread is idle is claimed in
-- the statement that queues it: it is inserted as running, leased to that worker, and
-- nobody claims it from the queue. That saves the claim (a round trip) and, on a
-- PostgreSQL server, the separate NOTIFY: given a channel, the announcement that other
-- processes' workers and thread streams read is sent here, at commit. A claimed run's
-- announcement ends in " claimed": workers ignore it, thread streams follow the run.
-- The thread lock (or the new thread) makes "idle" exact, as it makes enqueueing FIFO.
-- A new overload: agent processes of an older release keep calling the eleven-argument one.
CREATE FUNCTION enqueue_run(
  p_run_id uuid, p_thread_id uuid, p_new_thread boolean, p_temporary boolean, p_thread_meta jsonb,
  p_assistant_id uuid, p_metadata jsonb, p_kwargs jsonb, p_strategy text, p_after_seconds float8,
  p_assistant_meta jsonb, p_claim_worker text, p_lease_seconds float8, p_notify_channel text
) RETURNS SETOF runs LANGUAGE plpgsql AS $$
DECLARE
  v_thread_meta jsonb;
  v_claim boolean := p_claim_worker IS NOT NULL AND p_after_seconds <= 0;
  v_run runs;
BEGIN
  IF p_new_thread THEN
    INSERT INTO threads (thread_id, status, metadata, temporary) VALUES (p_thread_id, 'busy', p_thread_meta, p_temporary)
    ON CONFLICT (thread_id) DO NOTHING;
    IF NOT FOUND THEN RETURN; END IF;
    v_thread_meta := p_thread_meta;
  ELSE
    SELECT metadata INTO v_thread_meta FROM threads WHERE thread_id = p_thread_id FOR UPDATE;
    IF NOT FOUND THEN RETURN; END IF;
    IF EXISTS (SELECT 1 FROM runs WHERE thread_id = p_thread_id AND status IN ('pending', 'running')) THEN
      IF p_strategy <> 'enqueue' THEN RETURN; END IF;
      v_claim := false;
    END IF;
    UPDATE threads SET status = 'busy', metadata = metadata || p_thread_meta, updated_at = now()
    WHERE thread_id = p_thread_id
    RETURNING metadata INTO v_thread_meta;
  END IF;
  INSERT INTO runs (run_id, thread_id, assistant_id, metadata, kwargs, multitask_strategy, available_at,
                    status, attempt, lease_owner, lease_expires_at)
  VALUES (p_run_id, p_thread_id, p_assistant_id, p_assistant_meta || COALESCE(v_thread_meta, '{}'::jsonb) || p_metadata,
          p_kwargs, p_strategy, now() + make_interval(secs => p_after_seconds),
          CASE WHEN v_claim THEN 'running' ELSE 'pending' END,
          CASE WHEN v_claim THEN 1 ELSE 0 END,
          CASE WHEN v_claim THEN p_claim_worker END,
          CASE WHEN v_claim THEN now() + make_interval(secs => p_lease_seconds) END)
  RETURNING * INTO v_run;
  IF p_notify_channel IS NOT NULL THEN
    PERFORM pg_notify(p_notify_channel, p_run_id::text || ' ' || p_after_seconds::text || ' ' || p_thread_id::text
                                        || CASE WHEN v_claim THEN ' claimed' ELSE '' END);
  END IF;
  RETURN NEXT v_run;
END $$;
