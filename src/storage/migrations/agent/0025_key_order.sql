-- Key order is kept (decision 0031). jsonb sorts an object's keys (shorter first), so a
-- client that sent {"type":"text","text":"hi"} got {"text":"hi","type":"text"} back,
-- and so did its graph. Every column whose JSON goes back to a client or a graph is now
-- `json`, which keeps the text as written; SQL that looks inside casts it to jsonb, and
-- the two containment indexes index that cast. Existing rows keep the (sorted) order
-- jsonb gave them. Columns only Slipway writes, in its own order (errors, ttl, the
-- checkpoint skeleton), stay jsonb.

-- The top-level merge jsonb's `a || b` does, keeping order: a's keys where they were
-- (with b's value when b has the key too), then b's other keys in b's order, as
-- Python's {**a, **b} and JavaScript's {...a, ...b} do. NULL counts as {}.
CREATE FUNCTION json_merge(a json, b json) RETURNS json
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS 'SELECT COALESCE(json_object_agg(COALESCE(y.key, x.key), COALESCE(y.value, x.value) ORDER BY x.ord NULLS LAST, y.ord), ''{}''::json)
    FROM json_each(a) WITH ORDINALITY AS x(key, value, ord)
    FULL JOIN json_each(b) WITH ORDINALITY AS y(key, value, ord) ON x.key = y.key';

DROP INDEX threads_metadata;
DROP INDEX threads_values;
ALTER TABLE threads
  ALTER COLUMN metadata DROP DEFAULT, ALTER COLUMN metadata TYPE json, ALTER COLUMN metadata SET DEFAULT '{}',
  ALTER COLUMN config DROP DEFAULT, ALTER COLUMN config TYPE json, ALTER COLUMN config SET DEFAULT '{}',
  ALTER COLUMN "values" TYPE json,
  ALTER COLUMN interrupts DROP DEFAULT, ALTER COLUMN interrupts TYPE json, ALTER COLUMN interrupts SET DEFAULT '{}';
-- Searches filter with `metadata::jsonb @> $filter` and `"values"::jsonb @> $filter`.
CREATE INDEX threads_metadata ON threads USING gin ((metadata::jsonb) jsonb_path_ops);
CREATE INDEX threads_values ON threads USING gin (("values"::jsonb) jsonb_path_ops);

ALTER TABLE runs
  ALTER COLUMN metadata DROP DEFAULT, ALTER COLUMN metadata TYPE json, ALTER COLUMN metadata SET DEFAULT '{}',
  ALTER COLUMN kwargs DROP DEFAULT, ALTER COLUMN kwargs TYPE json, ALTER COLUMN kwargs SET DEFAULT '{}';
ALTER TABLE run_events ALTER COLUMN data TYPE json;
ALTER TABLE run_results ALTER COLUMN "values" TYPE json;

ALTER TABLE assistants
  ALTER COLUMN config DROP DEFAULT, ALTER COLUMN config TYPE json, ALTER COLUMN config SET DEFAULT '{}',
  ALTER COLUMN context DROP DEFAULT, ALTER COLUMN context TYPE json, ALTER COLUMN context SET DEFAULT '{}',
  ALTER COLUMN metadata DROP DEFAULT, ALTER COLUMN metadata TYPE json, ALTER COLUMN metadata SET DEFAULT '{}';
ALTER TABLE assistant_versions
  ALTER COLUMN config DROP DEFAULT, ALTER COLUMN config TYPE json, ALTER COLUMN config SET DEFAULT '{}',
  ALTER COLUMN context DROP DEFAULT, ALTER COLUMN context TYPE json, ALTER COLUMN context SET DEFAULT '{}',
  ALTER COLUMN metadata DROP DEFAULT, ALTER COLUMN metadata TYPE json, ALTER COLUMN metadata SET DEFAULT '{}';

ALTER TABLE crons
  ALTER COLUMN payload DROP DEFAULT, ALTER COLUMN payload TYPE json, ALTER COLUMN payload SET DEFAULT '{}',
  ALTER COLUMN metadata DROP DEFAULT, ALTER COLUMN metadata TYPE json, ALTER COLUMN metadata SET DEFAULT '{}';

ALTER TABLE store_items ALTER COLUMN value TYPE json;

-- checkpoints.metadata is a thread state's `metadata` (the run's metadata under
-- LangGraph's). The view and the function returning its rows name the column, so they
-- are made again around the change, as 0002 made them.
DROP FUNCTION checkpoint_tuple(text, text, text);
DROP VIEW checkpoint_tuples;
ALTER TABLE checkpoints ALTER COLUMN metadata DROP DEFAULT, ALTER COLUMN metadata TYPE json, ALTER COLUMN metadata SET DEFAULT '{}';

CREATE VIEW checkpoint_tuples AS
SELECT cp.thread_id, cp.checkpoint_ns, cp.checkpoint_id, cp.parent_checkpoint_id,
       cp.checkpoint, cp.metadata,
       bl.channels AS blob_channels, bl.types AS blob_types, bl.blobs AS blob_values,
       wr.task_ids AS write_task_ids, wr.channels AS write_channels,
       wr.types AS write_types, wr.blobs AS write_values,
       ps.types AS send_types, ps.blobs AS send_values
FROM checkpoints cp
LEFT JOIN LATERAL (
  SELECT array_agg(b.channel ORDER BY b.channel) AS channels,
         array_agg(b.type ORDER BY b.channel) AS types,
         array_agg(b.blob ORDER BY b.channel) AS blobs
  FROM checkpoint_channel_versions(cp.checkpoint -> 'channel_versions') AS v
  CROSS JOIN LATERAL (
    SELECT b.channel, b.type, b.blob FROM checkpoint_blobs b
    WHERE b.thread_id = cp.thread_id AND b.checkpoint_ns = cp.checkpoint_ns
      AND b.channel = v.channel COLLATE "C" AND b.version = v.version COLLATE "C"
    LIMIT 1
  ) b
) bl ON true
LEFT JOIN LATERAL (
  SELECT array_agg(w.task_id ORDER BY w.task_path, w.task_id, w.idx) AS task_ids,
         array_agg(w.channel ORDER BY w.task_path, w.task_id, w.idx) AS channels,
         array_agg(w.type ORDER BY w.task_path, w.task_id, w.idx) AS types,
         array_agg(w.blob ORDER BY w.task_path, w.task_id, w.idx) AS blobs
  FROM checkpoint_writes w
  WHERE w.thread_id = cp.thread_id AND w.checkpoint_ns = cp.checkpoint_ns
    AND w.checkpoint_id = cp.checkpoint_id
) wr ON true
LEFT JOIN LATERAL (
  SELECT array_agg(w.type ORDER BY w.task_path, w.task_id, w.idx) AS types,
         array_agg(w.blob ORDER BY w.task_path, w.task_id, w.idx) AS blobs
  FROM checkpoint_writes w
  WHERE (cp.checkpoint ->> 'v')::int < 4 AND cp.parent_checkpoint_id IS NOT NULL
    AND w.thread_id = cp.thread_id AND w.checkpoint_ns = cp.checkpoint_ns
    AND w.checkpoint_id = cp.parent_checkpoint_id AND w.channel = '__pregel_tasks'
) ps ON true;

CREATE FUNCTION checkpoint_tuple(p_thread_id text, p_checkpoint_ns text, p_checkpoint_id text)
RETURNS SETOF checkpoint_tuples LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF p_checkpoint_id IS NULL THEN
    RETURN QUERY SELECT * FROM checkpoint_tuples t
      WHERE t.thread_id = p_thread_id AND t.checkpoint_ns = p_checkpoint_ns
      ORDER BY t.checkpoint_id DESC LIMIT 1;
  ELSE
    RETURN QUERY SELECT * FROM checkpoint_tuples t
      WHERE t.thread_id = p_thread_id AND t.checkpoint_ns = p_checkpoint_ns
        AND t.checkpoint_id = p_checkpoint_id;
  END IF;
END
$$;

-- put_batch (0020) cast the metadata text to jsonb; the same function keeps it as written.
CREATE OR REPLACE FUNCTION put_batch(
  c_thread_ids text[], c_namespaces text[], c_ids text[], c_parent_ids text[],
  c_checkpoints text[], c_metadata text[],
  b_thread_ids text[], b_namespaces text[], b_channels text[], b_versions text[], b_types text[], b_blobs bytea[],
  w_thread_ids text[], w_namespaces text[], w_checkpoint_ids text[], w_task_ids text[], w_task_paths text[],
  w_run_ids text[], w_idx integer[], w_channels text[], w_types text[], w_blobs bytea[]
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF cardinality(b_channels) > 0 THEN
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT u.thread_id, u.ns, u.channel, u.version, u.type, u.blob
    FROM unnest(b_thread_ids, b_namespaces, b_channels, b_versions, b_types, b_blobs)
      AS u(thread_id, ns, channel, version, type, blob)
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING;
  END IF;
  IF cardinality(c_ids) > 0 THEN
    INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
    SELECT u.thread_id, u.ns, u.id, u.parent_id, u.checkpoint::jsonb, u.metadata::json
    FROM unnest(c_thread_ids, c_namespaces, c_ids, c_parent_ids, c_checkpoints, c_metadata)
      AS u(thread_id, ns, id, parent_id, checkpoint, metadata)
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
    DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata;
  END IF;
  IF cardinality(w_idx) > 0 THEN
    INSERT INTO checkpoint_writes
      (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, run_id, idx, channel, type, blob)
    SELECT u.thread_id, u.ns, u.checkpoint_id, u.task_id, u.task_path, u.run_id, u.idx, u.channel, u.type, u.blob
    FROM unnest(w_thread_ids, w_namespaces, w_checkpoint_ids, w_task_ids, w_task_paths, w_run_ids,
                w_idx, w_channels, w_types, w_blobs)
      AS u(thread_id, ns, checkpoint_id, task_id, task_path, run_id, idx, channel, type, blob)
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE
    SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob,
        task_path = EXCLUDED.task_path, run_id = EXCLUDED.run_id
    WHERE EXCLUDED.idx < 0;
  END IF;
END
$$;

-- enqueue_run of 0022 and 0024 with json metadata and kwargs, merged in order with
-- json_merge; one function, the assistant check included (skipped when no stamp is
-- given). The run's metadata is the assistant's, then the thread's, then its own.
CREATE FUNCTION enqueue_run(
  p_run_id uuid, p_thread_id uuid, p_new_thread boolean, p_temporary boolean, p_thread_meta json,
  p_assistant_id uuid, p_metadata json, p_kwargs json, p_strategy text, p_after_seconds float8,
  p_assistant_meta json, p_claim_worker text, p_lease_seconds float8, p_notify_channel text,
  p_assistant_version integer, p_assistant_updated_at timestamptz
) RETURNS SETOF runs LANGUAGE plpgsql AS $$
DECLARE
  v_thread_meta json;
  v_claim boolean := p_claim_worker IS NOT NULL AND p_after_seconds <= 0;
  v_run runs;
BEGIN
  IF p_new_thread THEN
    INSERT INTO threads (thread_id, status, metadata, temporary) VALUES (p_thread_id, 'busy', p_thread_meta, p_temporary)
    ON CONFLICT (thread_id) DO NOTHING;
    IF NOT FOUND THEN RETURN; END IF;
    v_thread_meta := p_thread_meta;
  ELSE
    PERFORM 1 FROM threads WHERE thread_id = p_thread_id FOR UPDATE;
    IF NOT FOUND THEN RETURN; END IF;
    IF EXISTS (SELECT 1 FROM runs WHERE thread_id = p_thread_id AND status IN ('pending', 'running')) THEN
      IF p_strategy <> 'enqueue' THEN RETURN; END IF;
      v_claim := false;
    END IF;
    UPDATE threads SET status = 'busy', metadata = json_merge(metadata, p_thread_meta), updated_at = now()
    WHERE thread_id = p_thread_id
    RETURNING metadata INTO v_thread_meta;
  END IF;
  INSERT INTO runs (run_id, thread_id, assistant_id, metadata, kwargs, multitask_strategy, available_at,
                    status, attempt, lease_owner, lease_expires_at)
  VALUES (p_run_id, p_thread_id, p_assistant_id, json_merge(json_merge(p_assistant_meta, v_thread_meta), p_metadata),
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
  -- Checked last, once the thread's lock has been waited for (0024): raising undoes the rest.
  IF p_assistant_version IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM assistants
    WHERE assistant_id = p_assistant_id AND version = p_assistant_version
      AND date_trunc('milliseconds', updated_at) = date_trunc('milliseconds', p_assistant_updated_at)
  ) THEN
    RAISE EXCEPTION 'assistant % changed since it was read', p_assistant_id USING ERRCODE = 'SWA01';
  END IF;
  RETURN NEXT v_run;
END $$;

-- The jsonb overloads merged metadata with jsonb's `||`, which json columns do not have.
-- The fourteen-argument one (called by the previous release, directly and through 0024's)
-- now hands over to the one above; the older two have no caller left.
CREATE OR REPLACE FUNCTION enqueue_run(
  p_run_id uuid, p_thread_id uuid, p_new_thread boolean, p_temporary boolean, p_thread_meta jsonb,
  p_assistant_id uuid, p_metadata jsonb, p_kwargs jsonb, p_strategy text, p_after_seconds float8,
  p_assistant_meta jsonb, p_claim_worker text, p_lease_seconds float8, p_notify_channel text
) RETURNS SETOF runs LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM enqueue_run(p_run_id, p_thread_id, p_new_thread, p_temporary, p_thread_meta::json,
    p_assistant_id, p_metadata::json, p_kwargs::json, p_strategy, p_after_seconds, p_assistant_meta::json, p_claim_worker,
    p_lease_seconds, p_notify_channel, NULL::integer, NULL::timestamptz);
END $$;
DROP FUNCTION enqueue_run(uuid, uuid, boolean, boolean, jsonb, uuid, jsonb, jsonb, text, float8);
DROP FUNCTION enqueue_run(uuid, uuid, boolean, boolean, jsonb, uuid, jsonb, jsonb, text, float8, jsonb);

-- finish_run of 0009 with the thread's values and interrupts as json. The jsonb
-- overloads keep working for the previous release (jsonb converts to json on assignment).
CREATE FUNCTION finish_run(
  p_run_id uuid, p_worker text, p_attempt integer, p_status text, p_error jsonb, p_thread_id uuid,
  p_write_snapshot boolean, p_values json, p_interrupts json, p_thread_error jsonb, p_settled_status text, p_now timestamptz
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
