/**
 * The checkpointer's SQL, one statement per constant. Tables are in
 * storage/migrations/agent/0002_checkpoints.sql; names resolve through the
 * connection's search_path (one schema per component).
 *
 * The calls the graph makes while it runs call PL/pgSQL functions defined in the
 * migrations (plans cached per connection; 0002 says why): getTuple is one statement
 * reading a checkpoint with its channel values and pending writes from the view
 * `checkpoint_tuples`; put and putWrites are grouped (batch.ts) into one `put_batch`
 * statement per group, which inserts blobs, checkpoints and writes over unnest() arrays.
 */

/** The columns of a CheckpointTuple row (codec.ts TupleRow); metadata as text for the serializer. */
const TUPLE_COLUMNS = `cp.thread_id, cp.checkpoint_ns, cp.checkpoint_id, cp.parent_checkpoint_id,
  cp.checkpoint, cp.metadata::text AS metadata, cp.blob_channels, cp.blob_types, cp.blob_values,
  cp.write_task_ids, cp.write_channels, cp.write_types, cp.write_values, cp.send_types, cp.send_values`;

/**
 * getTuple: the checkpoint $3 of thread $1, namespace $2, or the newest one when
 * $3 is null, through the plan-caching function of the migration.
 */
export const GET_TUPLE = `SELECT ${TUPLE_COLUMNS} FROM checkpoint_tuple($1, $2, $3) cp`;

/**
 * list: picks one page of checkpoint keys from `checkpoints c` (the caller's
 * `where` on alias c, newest first, `limit` rows), then joins the view by key, so
 * values and writes are read for that page only, whatever plan the filters get.
 */
export function listPage(where: string[], limitParam: string): string {
  const order = (alias: string) => `${alias}.checkpoint_id DESC, ${alias}.thread_id DESC, ${alias}.checkpoint_ns DESC`;
  return `SELECT ${TUPLE_COLUMNS}
FROM (SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id FROM checkpoints c
      ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY ${order("c")} LIMIT ${limitParam}) page
JOIN checkpoint_tuples cp USING (thread_id, checkpoint_ns, checkpoint_id)
ORDER BY ${order("cp")}`;
}

/**
 * put and putWrites, several at a time (batch.ts): see put_batch in migration 0020
 * for the conflict rules, which are put_checkpoint's and put_writes' of 0002.
 */
export const PUT_BATCH = putBatchCall(1);

/** The put_batch call with its 22 parameters numbered from `first` (the run's end appends it to finish_run's). */
export function putBatchCall(first: number): string {
  const types = [
    "text[]",
    "text[]",
    "text[]",
    "text[]",
    "text[]",
    "text[]",
    "text[]",
    "text[]",
    "text[]",
    "text[]",
    "text[]",
    "bytea[]",
    "text[]",
    "text[]",
    "text[]",
    "text[]",
    "text[]",
    "text[]",
    "int[]",
    "text[]",
    "text[]",
    "bytea[]",
  ];
  return `SELECT put_batch(${types.map((type, i) => `$${first + i}::${type}`).join(", ")})`;
}

export const DELETE_THREAD = `
WITH w AS (DELETE FROM checkpoint_writes WHERE thread_id = $1),
     b AS (DELETE FROM checkpoint_blobs WHERE thread_id = $1)
DELETE FROM checkpoints WHERE thread_id = $1`;

/**
 * Copies every row of thread $1 to thread $2, rewriting metadata.thread_id where it
 * named the source. Rows the target already has are kept.
 */
export const COPY_THREAD = `
WITH c AS (
  INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
  SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint,
         CASE WHEN metadata ->> 'thread_id' = $1
              THEN json_merge(metadata, json_build_object('thread_id', $2::text)) ELSE metadata END
  FROM checkpoints WHERE thread_id = $1
  ON CONFLICT DO NOTHING
), b AS (
  INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
  SELECT $2, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = $1
  ON CONFLICT DO NOTHING
)
INSERT INTO checkpoint_writes
  (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, run_id, idx, channel, type, blob)
SELECT $2, checkpoint_ns, checkpoint_id, task_id, task_path, run_id, idx, channel, type, blob
FROM checkpoint_writes WHERE thread_id = $1
ON CONFLICT DO NOTHING`;

/**
 * Deletes the checkpoints run $2 made on thread $1 (any namespace), their writes,
 * and the writes the run left on other checkpoints (a resumed run writes its
 * resume value and first task results on the previous run's checkpoint).
 */
export const DELETE_RUN = `
WITH gone AS (
  DELETE FROM checkpoints WHERE thread_id = $1 AND metadata ->> 'run_id' = $2
  RETURNING checkpoint_ns, checkpoint_id
), w AS (
  DELETE FROM checkpoint_writes w
  WHERE w.thread_id = $1
    AND (w.run_id = $2 OR (w.checkpoint_ns, w.checkpoint_id) IN (SELECT checkpoint_ns, checkpoint_id FROM gone))
)
SELECT count(*)::int AS deleted FROM gone`;

/**
 * Keeps the newest root checkpoint of thread $1 and the subgraph checkpoints taken
 * under it (metadata.parents[""] names it: an interrupted subgraph resumes from
 * them); deletes every other checkpoint and its writes.
 */
export const PRUNE_KEEP_LATEST = `
WITH latest AS (
  SELECT checkpoint_id FROM checkpoints
  WHERE thread_id = $1 AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1
), gone AS (
  DELETE FROM checkpoints c
  WHERE c.thread_id = $1
    AND NOT coalesce(CASE WHEN c.checkpoint_ns = ''
                          THEN c.checkpoint_id = (SELECT checkpoint_id FROM latest)
                          ELSE c.metadata -> 'parents' ->> '' = (SELECT checkpoint_id FROM latest) END, false)
  RETURNING c.checkpoint_ns, c.checkpoint_id
), w AS (
  DELETE FROM checkpoint_writes w
  WHERE w.thread_id = $1
    AND (w.checkpoint_ns, w.checkpoint_id) IN (SELECT checkpoint_ns, checkpoint_id FROM gone)
)
SELECT count(*)::int AS deleted FROM gone`;

/** After a prune the kept root checkpoint's parent is gone: it becomes the first. */
export const DETACH_LATEST_ROOT = `
UPDATE checkpoints SET parent_checkpoint_id = NULL
WHERE thread_id = $1 AND checkpoint_ns = '' AND parent_checkpoint_id IS NOT NULL
  AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = '')`;

/**
 * Deletes the blobs of thread $1 that no remaining checkpoint refers to. Runs as
 * its own statement after a delete (a CTE would not see that delete). The set of
 * referenced (namespace, channel, version) is built once and probed by hash.
 */
export const COLLECT_BLOBS = `
DELETE FROM checkpoint_blobs b
WHERE b.thread_id = $1
  AND (b.checkpoint_ns, b.channel, b.version) NOT IN (
    SELECT c.checkpoint_ns, v.channel, v.version
    FROM checkpoints c, jsonb_each_text(c.checkpoint -> 'channel_versions') AS v(channel, version)
    WHERE c.thread_id = $1 AND v.version IS NOT NULL
  )`;

/** The newest root checkpoint's id and metadata, without its values or writes. */
export const LATEST_META = `
SELECT checkpoint_id, parent_checkpoint_id, metadata
FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = ''
ORDER BY checkpoint_id DESC LIMIT 1`;
