-- The SKU map as ./dev demo prints it: each of the shop's SKUs joined to the provider's ids and its
-- stock on hand (the result table fulfillsync_variant_sync, kept by pull_stock). SQLite and PostgreSQL.
SELECT v.product_reference_id AS product, v.sku, m.product_id, m.variant_id, m.inventory_id,
       m.on_hand_qty AS on_hand, m.stock_read_at
FROM fulfillsync_variants v LEFT JOIN fulfillsync_variant_sync m USING (sku)
ORDER BY v.product_reference_id, v.sku
