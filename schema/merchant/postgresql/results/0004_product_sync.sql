-- Schema version 4: the sync state of every product of the catalog the daemon has seen
-- (schema/merchant/README.md, "Catalog"). `{prefix}` is merchant.result_table_prefix.

CREATE TABLE "{prefix}product_sync" (
  reference_id      text PRIMARY KEY,   -- fulfillsync_products.reference_id
  state             text NOT NULL,      -- pending, in_flight, created, updating, rejected, update_rejected, unknown
  remote_id         bigint,            -- the provider's product id once created
  remote_status     text,               -- not used (kept for the shared result columns)
  last_error        text,               -- why the last create or update was rejected or failed; NULL after success
  note              text,               -- e.g. variants removed at the merchant, which the provider keeps
  attempts          bigint NOT NULL DEFAULT 0,
  content_hash      text,               -- the product version (with its variants) the state refers to
  first_seen_at     text NOT NULL,
  updated_at        text NOT NULL,
  remote_created_at text,               -- when the provider created the product
  remote_updated_at text                -- not used (kept for the shared upsert rules)
);
CREATE INDEX "{prefix}product_sync_by_state" ON "{prefix}product_sync" (state, updated_at);
