-- The next run of a thread, claimed by the worker whose run of that thread just ended, in
-- the statement that records that end (runs/repository.ts finishRunWithSnapshot). A burst
-- of runs queued on one thread then goes from one to the next without a claim statement
-- of its own or a wake-up between them. Same rules as the claim (claimNextRun): pending,
-- due, first of its thread, no run of the thread running; SKIP LOCKED leaves it to a
-- claimer that is already on it. A null thread claims nothing.
CREATE FUNCTION claim_next_of_thread(p_thread_id uuid, p_worker text, p_lease_seconds float8)
RETURNS SETOF runs LANGUAGE plpgsql AS $$
BEGIN
  IF p_thread_id IS NULL THEN RETURN; END IF;
  RETURN QUERY
    UPDATE runs SET status = 'running', attempt = runs.attempt + 1, lease_owner = p_worker,
      lease_expires_at = now() + make_interval(secs => p_lease_seconds), updated_at = now()
    WHERE run_id = (
      SELECT r.run_id FROM runs r
      WHERE r.thread_id = p_thread_id AND r.status = 'pending' AND r.available_at <= now()
        AND NOT EXISTS (
          SELECT 1 FROM runs x
          WHERE x.thread_id = r.thread_id
            AND (x.status = 'running' OR (x.status = 'pending' AND x.seq < r.seq)))
      ORDER BY r.seq
      LIMIT 1
      FOR UPDATE OF r SKIP LOCKED)
    RETURNING runs.*;
END $$;
