-- Several checkpoints and pending writes in one statement (src/agentserver/checkpointer/
-- batch.ts): the saver sends what the graphs of this process asked to store while the
-- previous statement was under way, so a step's writes travel with its checkpoint and
-- concurrent runs share a commit. Flattened parallel arrays (neither driver passes
-- arrays of records); the saver has already removed duplicate keys in the order the
-- calls came, so each INSERT touches a row at most once. Conflict rules are those of
-- put_checkpoint and put_writes (0002_checkpoints.sql).
CREATE FUNCTION put_batch(
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
    SELECT u.thread_id, u.ns, u.id, u.parent_id, u.checkpoint::jsonb, u.metadata::jsonb
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
