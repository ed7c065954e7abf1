-- A run's metadata is its assistant's, then its thread's, then its own, each overriding
-- the one before, as on the vendor's servers (custom auth's owner, set on the thread,
-- reaches the run and its graph's config this way). The thread's is read under the lock
-- that enqueueing takes anyway. A new overload: agent processes of an older release that
-- share this database during a switch keep calling the ten-argument one.
CREATE FUNCTION enqueue_run(
  p_run_id uuid, p_thread_id uuid, p_new_thread boolean, p_temporary boolean, p_thread_meta jsonb,
  p_assistant_id uuid, p_metadata jsonb, p_kwargs jsonb, p_strategy text, p_after_seconds float8,
  p_assistant_meta jsonb
) RETURNS SETOF runs LANGUAGE plpgsql AS $$
DECLARE
  v_thread_meta jsonb;
BEGIN
  IF p_new_thread THEN
    INSERT INTO threads (thread_id, status, metadata, temporary) VALUES (p_thread_id, 'busy', p_thread_meta, p_temporary)
    ON CONFLICT (thread_id) DO NOTHING;
    IF NOT FOUND THEN RETURN; END IF;
    v_thread_meta := p_thread_meta;
  ELSE
    SELECT metadata INTO v_thread_meta FROM threads WHERE thread_id = p_thread_id FOR UPDATE;
    IF NOT FOUND THEN RETURN; END IF;
    IF p_strategy <> 'enqueue'
       AND EXISTS (SELECT 1 FROM runs WHERE thread_id = p_thread_id AND status IN ('pending', 'running')) THEN
      RETURN;
    END IF;
    UPDATE threads SET status = 'busy', metadata = metadata || p_thread_meta, updated_at = now()
    WHERE thread_id = p_thread_id
    RETURNING metadata INTO v_thread_meta;
  END IF;
  RETURN QUERY
    INSERT INTO runs (run_id, thread_id, assistant_id, metadata, kwargs, multitask_strategy, available_at)
    VALUES (p_run_id, p_thread_id, p_assistant_id, p_assistant_meta || COALESCE(v_thread_meta, '{}'::jsonb) || p_metadata,
            p_kwargs, p_strategy, now() + make_interval(secs => p_after_seconds))
    RETURNING *;
END $$;
