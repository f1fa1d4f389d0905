-- The catalog's entries in the change log (schema/merchant/README.md, "Catalog"): load it after
-- source_tables.sql and change_log/0001_change_log.sql, which has the table. Every change to a
-- product or one of its variants logs the product. The daemon compares the catalog with its ledger
-- only when an entry is new since its last full comparison, and then deletes the entries that
-- comparison covered. Idempotent.
CREATE TRIGGER IF NOT EXISTS fulfillsync_products_log_insert AFTER INSERT ON fulfillsync_products BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) VALUES ('fulfillsync_products', NEW.reference_id);
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_products_log_update AFTER UPDATE ON fulfillsync_products BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) SELECT 'fulfillsync_products', NEW.reference_id
  UNION SELECT 'fulfillsync_products', OLD.reference_id;
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_products_log_delete AFTER DELETE ON fulfillsync_products BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) VALUES ('fulfillsync_products', OLD.reference_id);
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_variants_log_insert AFTER INSERT ON fulfillsync_variants BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) VALUES ('fulfillsync_products', NEW.product_reference_id);
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_variants_log_update AFTER UPDATE ON fulfillsync_variants BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) SELECT 'fulfillsync_products', NEW.product_reference_id
  UNION SELECT 'fulfillsync_products', OLD.product_reference_id;
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_variants_log_delete AFTER DELETE ON fulfillsync_variants BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) VALUES ('fulfillsync_products', OLD.product_reference_id);
END;
