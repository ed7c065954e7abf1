-- Stored functions that no supported agent version calls any more (decision 0048). A
-- rolling switch runs the new version's processes beside the old one's on one schema, so
-- each function keeps the signatures that the oldest supported version calls: today the
-- agent code of migrations 0022 to 0026, which queues with the fourteen-argument jsonb
-- enqueue_run (0022, and 0024's sixteen-argument one on top of it) or the json one (0025),
-- and records a run's end with the twelve-argument finish_run (0009 jsonb, 0025 json).
-- Dropped here, with the last version that called each:
--   finish_run of 0007 (eleven arguments, run locked before thread): code before 0009;
--   put_checkpoint and put_writes of 0002: code before 0020 (put_batch since).
DROP FUNCTION finish_run(uuid, text, integer, text, jsonb, uuid, jsonb, jsonb, jsonb, text, timestamptz);
DROP FUNCTION put_checkpoint(text, text, text, text, jsonb, jsonb, text[], text[], text[], bytea[]);
DROP FUNCTION put_writes(text, text, text, text, text, text, integer[], text[], text[], bytea[]);
