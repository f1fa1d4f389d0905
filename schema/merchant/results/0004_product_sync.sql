-- Schema version 4: the sync state of every product of the catalog the daemon has seen
-- (schema/merchant/README.md, "Catalog"). `{prefix}` is merchant.result_table_prefix.

CREATE TABLE "{prefix}product_sync" (
  reference_id      TEXT PRIMARY KEY,   -- fulfillsync_products.reference_id
  state             TEXT NOT NULL,      -- pending, in_flight, created, updating, rejected, update_rejected, unknown
  remote_id         INTEGER,            -- the provider's product id once created
  remote_status     TEXT,               -- not used (kept for the shared result columns)
  last_error        TEXT,               -- why the last create or update was rejected or failed; NULL after success
  note              TEXT,               -- e.g. variants removed at the merchant, which the provider keeps
  attempts          INTEGER NOT NULL DEFAULT 0,
  content_hash      TEXT,               -- the product version (with its variants) the state refers to
  first_seen_at     TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  remote_created_at TEXT,               -- when the provider created the product
  remote_updated_at TEXT                -- not used (kept for the shared upsert rules)
);
CREATE INDEX "{prefix}product_sync_by_state" ON "{prefix}product_sync" (state, updated_at);
