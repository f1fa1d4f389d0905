-- The daemon's result tables in PostgreSQL, schema version 1: the sync state of every order and
-- return it has seen. Created in merchant.postgresql.result_schema (the search_path when the daemon
-- applies it); `{prefix}` is merchant.result_table_prefix (a validated identifier). The columns are
-- those of schema/merchant/results/ with PostgreSQL's types. Times are UTC ISO 8601 text
-- (2026-03-01T12:34:56.789Z) as there, so that both databases order and compare them alike, and a
-- time the provider sent that is no time is kept, not refused.

CREATE TABLE "{prefix}order_sync" (
  reference_id        text PRIMARY KEY,   -- fulfillsync_orders.reference_id
  state               text NOT NULL,      -- pending, in_flight, created, rejected, unknown, cancelled, ...
  remote_id           bigint,             -- the provider's order id once created
  remote_status       text,               -- the provider's order status (Processing, Cancelled, ...)
  last_error          text,               -- why the last attempt failed or was rejected; NULL after success
  note                text,               -- a change the API cannot apply to a created order
  attempts            bigint NOT NULL DEFAULT 0,
  content_hash        text,               -- the source row version the state refers to
  first_seen_at       text NOT NULL,
  updated_at          text NOT NULL,
  remote_created_at   text,
  cancel_requested_at text,
  cancelled_at        text
);
CREATE INDEX "{prefix}order_sync_by_state" ON "{prefix}order_sync" (state, updated_at);

CREATE TABLE "{prefix}return_sync" (
  reference_id      text PRIMARY KEY,     -- fulfillsync_returns.reference_id
  state             text NOT NULL,
  remote_id         bigint,
  remote_status     text,
  last_error        text,
  note              text,
  attempts          bigint NOT NULL DEFAULT 0,
  content_hash      text,
  first_seen_at     text NOT NULL,
  updated_at        text NOT NULL,
  remote_created_at text
);
CREATE INDEX "{prefix}return_sync_by_state" ON "{prefix}return_sync" (state, updated_at);
