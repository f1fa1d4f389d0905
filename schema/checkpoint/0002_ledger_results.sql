-- Schema version 2: the outbound ledger learns
--  - `withdrawn`: never to be sent (an order cancelled at the merchant before it was created);
--  - the provider's status of what it created or cancelled;
--  - a note on a change the API cannot apply to a created order;
--  - `result_pending`: the merchant's result table does not show this row's state yet (the result
--    write follows the ledger commit and is replayed from here when it failed or was interrupted).
-- SQLite cannot change a CHECK constraint in place, so the table is rebuilt.

CREATE TABLE outbound_ledger_v2 (
  kind           TEXT NOT NULL CHECK (kind IN ('order_create', 'order_cancel', 'return_create')),
  source_key     TEXT NOT NULL,   -- the merchant's reference id of the order or return
  content_hash   TEXT NOT NULL,   -- hash of the latest source row version seen
  state          TEXT NOT NULL
                 CHECK (state IN ('pending', 'in_flight', 'created', 'rejected', 'unknown', 'withdrawn')),
  attempts       INTEGER NOT NULL DEFAULT 0,
  body           BLOB,            -- built once per row version and resent unchanged
  remote_id      INTEGER,
  remote_status  TEXT,
  last_error     TEXT,
  note           TEXT,
  result_pending INTEGER NOT NULL DEFAULT 1,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  PRIMARY KEY (kind, source_key)
);
INSERT INTO outbound_ledger_v2 (kind, source_key, content_hash, state, attempts, body, remote_id, last_error,
                                created_at, updated_at)
  SELECT kind, source_key, content_hash, state, attempts, body, remote_id, last_error, created_at, updated_at
  FROM outbound_ledger;
DROP TABLE outbound_ledger;
ALTER TABLE outbound_ledger_v2 RENAME TO outbound_ledger;
CREATE INDEX outbound_ledger_by_state ON outbound_ledger (kind, state, updated_at);
CREATE INDEX outbound_ledger_unwritten ON outbound_ledger (kind, source_key) WHERE result_pending = 1;
