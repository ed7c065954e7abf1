-- finish_run (0007) locked the run row before the thread row. Run creation under the
-- interrupt / rollback strategies and thread deletion lock the thread first and then
-- its runs, so the two orders could deadlock on a PostgreSQL server. Every writer now
-- takes the thread lock first. The thread id is always given; p_write_snapshot says
-- whether the snapshot fields are to be written. The old function stays (a different
-- signature): processes of the previous version sharing the database keep working
-- during a rolling update.

CREATE FUNCTION finish_run(
  p_run_id uuid, p_worker text, p_attempt integer, p_status text, p_error jsonb, p_thread_id uuid,
  p_write_snapshot boolean, p_values jsonb, p_interrupts jsonb, p_thread_error jsonb, p_settled_status text, p_now timestamptz
) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  thread_found boolean;
BEGIN
  PERFORM 1 FROM threads WHERE thread_id = p_thread_id FOR UPDATE;
  thread_found := FOUND;
  UPDATE runs SET status = p_status, error = p_error, lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
  WHERE run_id = p_run_id AND lease_owner = p_worker AND attempt = p_attempt;
  IF NOT FOUND THEN RETURN false; END IF;
  IF thread_found AND p_write_snapshot THEN
    UPDATE threads SET "values" = p_values, interrupts = p_interrupts, error = p_thread_error,
      status = CASE WHEN EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = threads.thread_id AND r.status IN ('pending', 'running'))
                    THEN 'busy' ELSE p_settled_status END,
      expires_at = CASE WHEN ttl IS NULL THEN expires_at ELSE p_now + make_interval(secs => (ttl->>'ttl_minutes')::float8 * 60) END,
      state_updated_at = now(), updated_at = now()
    WHERE thread_id = p_thread_id;
  END IF;
  RETURN true;
END $$;
