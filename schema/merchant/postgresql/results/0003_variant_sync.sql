-- Schema version 3 (as results/0003_variant_sync.sql, in PostgreSQL's types): the SKU map back from
-- the provider's catalog, one row per SKU, as pull_stock last read it.
CREATE TABLE "{prefix}variant_sync" (
  sku           text PRIMARY KEY,  -- the variant's SKU at the provider
  product_id    bigint NOT NULL,   -- the provider's product id (what an order line may be sent with)
  variant_id    bigint NOT NULL,   -- the provider's variant id
  inventory_id  bigint,            -- the provider's inventory id (returns, lots); NULL when it has none
  on_hand_qty   bigint,            -- units on hand at the provider, all fulfillment centers together
  product_name  text,
  variant_name  text,
  status        text,              -- the variant's status at the provider, e.g. Active, Inactive
  stock_read_at text NOT NULL      -- when the daemon read these figures (moves at every pass, changed or not)
);
CREATE INDEX "{prefix}variant_sync_by_inventory" ON "{prefix}variant_sync" (inventory_id);

-- The SKUs fulfillsync_watched_inventory names instead of an inventory id, as pull_lots resolved
-- them through the map at the start of its last cycle. Rewritten whole at every cycle.
CREATE TABLE "{prefix}watched_sku_sync" (
  sku          text PRIMARY KEY,  -- as fulfillsync_watched_inventory names it
  inventory_id bigint,            -- resolved through {prefix}variant_sync; NULL when it cannot be
  error        text,              -- why it cannot be; NULL once resolved
  checked_at   text NOT NULL      -- when pull_lots resolved it
);
