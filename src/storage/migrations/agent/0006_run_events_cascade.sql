-- A run's persisted stream goes with the run (and so with its thread).
DELETE FROM run_events e WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = e.run_id);
ALTER TABLE run_events ADD CONSTRAINT run_events_run_fk FOREIGN KEY (run_id) REFERENCES runs (run_id) ON DELETE CASCADE;
