-- The checkpoint store, schema version 1: pull cursors, the outbound ledger and OAuth tokens.
-- Timestamps are UTC ISO 8601 text.

-- How far each pull job has committed. `position` is the job's own encoding (a timestamp, a cursor).
CREATE TABLE cursors (
  job        TEXT PRIMARY KEY,
  position   TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- One row per merchant entity pushed to the provider: an order create, an order cancel, a return create.
CREATE TABLE outbound_ledger (
  kind         TEXT NOT NULL CHECK (kind IN ('order_create', 'order_cancel', 'return_create')),
  source_key   TEXT NOT NULL,   -- the merchant's reference id of the order or return
  content_hash TEXT NOT NULL,   -- hash of the source row version the body was built from
  state        TEXT NOT NULL CHECK (state IN ('pending', 'in_flight', 'created', 'rejected', 'unknown')),
  attempts     INTEGER NOT NULL DEFAULT 0,
  body         BLOB,            -- built once per row version and resent unchanged
  remote_id    INTEGER,
  last_error   TEXT,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  PRIMARY KEY (kind, source_key)
);
CREATE INDEX outbound_ledger_by_state ON outbound_ledger (state, kind);

-- OAuth tokens. The refresh token rotates on every refresh and is committed before use.
CREATE TABLE tokens (
  name          TEXT PRIMARY KEY,
  access_token  TEXT,
  refresh_token TEXT,
  expires_at    TEXT,
  updated_at    TEXT NOT NULL
);
