-- Idle deployments can sleep (docs/decisions/0039): their processes stop after a quiet
-- spell and start again on the next request, or just before a cron or a delayed run is due.
-- sleep_after_minutes: the deployment's own setting (NULL: the control plane's default;
-- 0: never). sleeping_since: set while it sleeps. wake_at: when the control plane wakes it
-- by itself (a minute before its next cron or delayed run), NULL when nothing is scheduled.
ALTER TABLE deployments ADD COLUMN sleep_after_minutes integer CHECK (sleep_after_minutes >= 0);
ALTER TABLE deployments ADD COLUMN sleeping_since timestamptz;
ALTER TABLE deployments ADD COLUMN wake_at timestamptz;
