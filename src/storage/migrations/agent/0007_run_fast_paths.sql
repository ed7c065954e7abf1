-- One round trip instead of six for the common run creation, and one instead of five
-- for recording a run's end with its thread's snapshot. Each function is one implicit
-- transaction; under READ COMMITTED every statement in it takes a fresh snapshot, so
-- the statements after the thread lock see whatever the lock waited for.

-- Queues a run when no multitask decision is needed: a new thread (stateless runs,
-- if_not_exists "create" callers go through the general path), or an existing thread
-- whose strategy is "enqueue" or which has no active run. Returns the run row, or no
-- row (having written nothing) when the general path must decide: thread missing,
-- thread id taken, or an active run under reject / interrupt / rollback.
CREATE FUNCTION enqueue_run(
  p_run_id uuid, p_thread_id uuid, p_new_thread boolean, p_temporary boolean, p_thread_meta jsonb,
  p_assistant_id uuid, p_metadata jsonb, p_kwargs jsonb, p_strategy text, p_after_seconds float8
) RETURNS SETOF runs LANGUAGE plpgsql AS $$
BEGIN
  IF p_new_thread THEN
    INSERT INTO threads (thread_id, status, metadata, temporary) VALUES (p_thread_id, 'busy', p_thread_meta, p_temporary)
    ON CONFLICT (thread_id) DO NOTHING;
    IF NOT FOUND THEN RETURN; END IF;
  ELSE
    PERFORM 1 FROM threads WHERE thread_id = p_thread_id FOR UPDATE;
    IF NOT FOUND THEN RETURN; END IF;
    IF p_strategy <> 'enqueue'
       AND EXISTS (SELECT 1 FROM runs WHERE thread_id = p_thread_id AND status IN ('pending', 'running')) THEN
      RETURN;
    END IF;
    UPDATE threads SET status = 'busy', metadata = metadata || p_thread_meta, updated_at = now()
    WHERE thread_id = p_thread_id;
  END IF;
  RETURN QUERY
    INSERT INTO runs (run_id, thread_id, assistant_id, metadata, kwargs, multitask_strategy, available_at)
    VALUES (p_run_id, p_thread_id, p_assistant_id, p_metadata, p_kwargs, p_strategy, now() + make_interval(secs => p_after_seconds))
    RETURNING *;
END $$;

-- Records how a run ended, only for the (worker, attempt) that holds it, and with it the
-- thread's snapshot computed from the graph's state. Returns false (writing nothing)
-- when the run was taken over or removed. A thread that is gone is left alone.
CREATE FUNCTION finish_run(
  p_run_id uuid, p_worker text, p_attempt integer, p_status text, p_error jsonb,
  p_thread_id uuid, p_values jsonb, p_interrupts jsonb, p_thread_error jsonb, p_settled_status text, p_now timestamptz
) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  UPDATE runs SET status = p_status, error = p_error, lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
  WHERE run_id = p_run_id AND lease_owner = p_worker AND attempt = p_attempt;
  IF NOT FOUND THEN RETURN false; END IF;
  PERFORM 1 FROM threads WHERE thread_id = p_thread_id FOR UPDATE;
  IF FOUND THEN
    UPDATE threads SET "values" = p_values, interrupts = p_interrupts, error = p_thread_error,
      status = CASE WHEN EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = threads.thread_id AND r.status IN ('pending', 'running'))
                    THEN 'busy' ELSE p_settled_status END,
      expires_at = CASE WHEN ttl IS NULL THEN expires_at ELSE p_now + make_interval(secs => (ttl->>'ttl_minutes')::float8 * 60) END,
      state_updated_at = now(), updated_at = now()
    WHERE thread_id = p_thread_id;
  END IF;
  RETURN true;
END $$;
