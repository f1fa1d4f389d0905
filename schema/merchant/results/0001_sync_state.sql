-- The daemon's result tables in the merchant database, schema version 1: the sync state of every
-- order and return it has seen. `{prefix}` is merchant.result_table_prefix (a validated identifier).
-- Timestamps are UTC ISO 8601 text (2026-03-01T12:34:56.789Z). See schema/merchant/README.md.

CREATE TABLE "{prefix}order_sync" (
  reference_id        TEXT PRIMARY KEY,   -- fulfillsync_orders.reference_id
  state               TEXT NOT NULL,      -- pending, in_flight, created, rejected, unknown, cancelled, ...
  remote_id           INTEGER,            -- the provider's order id once created
  remote_status       TEXT,               -- the provider's order status (Processing, Cancelled, ...)
  last_error          TEXT,               -- why the last attempt failed or was rejected; NULL after success
  note                TEXT,               -- a change the API cannot apply to a created order
  attempts            INTEGER NOT NULL DEFAULT 0,
  content_hash        TEXT,               -- the source row version the state refers to
  first_seen_at       TEXT NOT NULL,
  updated_at          TEXT NOT NULL,
  remote_created_at   TEXT,
  cancel_requested_at TEXT,
  cancelled_at        TEXT
);
CREATE INDEX "{prefix}order_sync_by_state" ON "{prefix}order_sync" (state, updated_at);

CREATE TABLE "{prefix}return_sync" (
  reference_id      TEXT PRIMARY KEY,     -- fulfillsync_returns.reference_id
  state             TEXT NOT NULL,
  remote_id         INTEGER,
  remote_status     TEXT,
  last_error        TEXT,
  note              TEXT,
  attempts          INTEGER NOT NULL DEFAULT 0,
  content_hash      TEXT,
  first_seen_at     TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  remote_created_at TEXT
);
CREATE INDEX "{prefix}return_sync_by_state" ON "{prefix}return_sync" (state, updated_at);
