-- Schema version 3: what the pull side keeps, and the jobs' figures.
--  - `tracking_marks`: each shipment whose tracking the daemon tells the provider is uploaded
--    (POST /shipment:batchUpdateTrackingUpload), with the same discipline as the outbound ledger:
--    `in_flight` is on disk before the request leaves; a mark whose answer was lost is `unknown` and
--    is looked up at the provider before it is ever sent again, so each shipment is marked once.
--  - `return_progress`: the provider's latest status of each return the daemon created, so that
--    pull_returns polls only the returns not yet completed or cancelled.

CREATE TABLE tracking_marks (
  shipment_id     INTEGER PRIMARY KEY,
  order_id        INTEGER NOT NULL,  -- the provider's order: how an unknown mark is looked up
  state           TEXT NOT NULL CHECK (state IN ('pending', 'in_flight', 'marked', 'unknown')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT,              -- the provider's reason for the last failed attempt
  next_attempt_at TEXT NOT NULL,     -- a pending mark is not sent before
  result_pending  INTEGER NOT NULL DEFAULT 0,  -- the merchant's tracking row does not show the state yet
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
);
CREATE INDEX tracking_marks_due ON tracking_marks (state, next_attempt_at);
CREATE INDEX tracking_marks_unwritten ON tracking_marks (shipment_id) WHERE result_pending = 1;

CREATE TABLE return_progress (
  remote_id INTEGER PRIMARY KEY,  -- the provider's return id
  status    TEXT NOT NULL,
  as_of     TEXT NOT NULL
);

-- Each job's figures, written every progress interval, for `fulfillsyncd status` (a separate process).
CREATE TABLE job_stats (
  job              TEXT PRIMARY KEY,
  runs             INTEGER NOT NULL,
  failed_runs      INTEGER NOT NULL,
  items            INTEGER NOT NULL,  -- settled since the daemon started
  last_run_seconds REAL,
  last_success_at  TEXT,
  data_as_of       TEXT,              -- pull jobs: the provider's data they last committed in full is as of
  updated_at       TEXT NOT NULL
);
