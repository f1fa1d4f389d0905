-- Schema version 3: the SKU map back from the provider's catalog. One row per SKU the provider's
-- product list (GET /product) holds: its product, variant and inventory item, and the stock on hand,
-- as pull_stock last read them. The shop joins its own SKUs to it. Written only by the daemon; a
-- read older than the one held never overwrites it.
CREATE TABLE "{prefix}variant_sync" (
  sku           TEXT PRIMARY KEY,  -- the variant's SKU at the provider
  product_id    INTEGER NOT NULL,  -- the provider's product id (what an order line may be sent with)
  variant_id    INTEGER NOT NULL,  -- the provider's variant id
  inventory_id  INTEGER,           -- the provider's inventory id (returns, lots); NULL when it has none
  on_hand_qty   INTEGER,           -- units on hand at the provider, all fulfillment centers together
  product_name  TEXT,
  variant_name  TEXT,
  status        TEXT,              -- the variant's status at the provider, e.g. Active, Inactive
  stock_read_at TEXT NOT NULL      -- when the daemon read these figures (moves at every pass, changed or not)
);
CREATE INDEX "{prefix}variant_sync_by_inventory" ON "{prefix}variant_sync" (inventory_id);

-- The SKUs fulfillsync_watched_inventory names instead of an inventory id, as pull_lots resolved
-- them through the map at the start of its last cycle: the inventory id whose lots it reads, or why
-- there is none. Rewritten whole at every cycle.
CREATE TABLE "{prefix}watched_sku_sync" (
  sku          TEXT PRIMARY KEY,  -- as fulfillsync_watched_inventory names it
  inventory_id INTEGER,           -- resolved through {prefix}variant_sync; NULL when it cannot be
  error        TEXT,              -- why it cannot be; NULL once resolved
  checked_at   TEXT NOT NULL      -- when pull_lots resolved it
);
