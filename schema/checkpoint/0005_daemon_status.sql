-- Schema version 5: what `fulfillsyncd status` reads beside (or after) a running daemon.
--  - job_stats keeps each job's runs failed in a row, whether it is paused for an operator, the
--    provider's last answer to it (when, HTTP status) and its last error (when, what);
--  - daemon_process has one row: the daemon that last started on this store, with what tells it
--    apart from a later process given the same PID (its start time in clock ticks since boot, and
--    the boot's id), and what it waits for before its jobs can start.
ALTER TABLE job_stats ADD COLUMN failed_in_a_row INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job_stats ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job_stats ADD COLUMN last_answer_at TEXT;
ALTER TABLE job_stats ADD COLUMN last_answer_status INTEGER;
ALTER TABLE job_stats ADD COLUMN last_error_at TEXT;
ALTER TABLE job_stats ADD COLUMN last_error TEXT;

CREATE TABLE daemon_process (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  pid         INTEGER NOT NULL,
  start_ticks INTEGER NOT NULL,  -- field 22 of /proc/PID/stat
  boot_id     TEXT NOT NULL,     -- /proc/sys/kernel/random/boot_id
  version     TEXT NOT NULL,
  started_at  TEXT NOT NULL,
  stopped_at  TEXT,              -- set by a clean stop
  waiting_for TEXT               -- set while the jobs cannot start (the provider does not answer)
);
