-- On a shared database a process queues runs with the assistant it read before, from
-- memory (runs/service.ts), instead of reading it for every run: another process may have
-- changed or deleted it since. The caller passes the version and updated_at it read. If
-- the assistant no longer has them, nothing is queued and the statement fails with
-- SQLSTATE SWA01; the caller then reads the assistant again. Every change to an assistant
-- (assistants/repository.ts updateCurrent, delete) moves one of the two or removes the row.
-- A new overload: processes of an older release keep calling the fourteen-argument one.
CREATE FUNCTION enqueue_run(
  p_run_id uuid, p_thread_id uuid, p_new_thread boolean, p_temporary boolean, p_thread_meta jsonb,
  p_assistant_id uuid, p_metadata jsonb, p_kwargs jsonb, p_strategy text, p_after_seconds float8,
  p_assistant_meta jsonb, p_claim_worker text, p_lease_seconds float8, p_notify_channel text,
  p_assistant_version integer, p_assistant_updated_at timestamptz
) RETURNS SETOF runs LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM enqueue_run(p_run_id, p_thread_id, p_new_thread, p_temporary, p_thread_meta,
    p_assistant_id, p_metadata, p_kwargs, p_strategy, p_after_seconds, p_assistant_meta, p_claim_worker,
    p_lease_seconds, p_notify_channel);
  -- Checked last, once the thread's lock has been waited for: a change committed meanwhile
  -- is seen. Raising undoes what was queued, and its NOTIFY.
  IF NOT EXISTS (
    SELECT 1 FROM assistants
    WHERE assistant_id = p_assistant_id AND version = p_assistant_version
      AND date_trunc('milliseconds', updated_at) = date_trunc('milliseconds', p_assistant_updated_at)
  ) THEN
    RAISE EXCEPTION 'assistant % changed since it was read', p_assistant_id USING ERRCODE = 'SWA01';
  END IF;
END $$;
