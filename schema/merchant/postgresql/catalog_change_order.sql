-- The catalog's change order in PostgreSQL (schema/merchant/README.md, "Catalog"): load it after
-- source_tables.sql and change_order/0001_change_xid.sql (whose functions it uses), as the tables'
-- owner, in the source schema. Every product records the id of the transaction that last wrote it
-- or one of its variants, and each commit that changed the catalog notifies fulfillsync_changes.
-- Idempotent.
ALTER TABLE fulfillsync_products ADD COLUMN IF NOT EXISTS change_xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX IF NOT EXISTS fulfillsync_products_by_xid ON fulfillsync_products (change_xid, reference_id);
CREATE OR REPLACE TRIGGER fulfillsync_products_xid BEFORE INSERT OR UPDATE ON fulfillsync_products
  FOR EACH ROW EXECUTE FUNCTION fulfillsync_record_xid();
-- A variant changed marks its product as written by this transaction.
CREATE OR REPLACE FUNCTION fulfillsync_variant_xid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'DELETE' THEN
    UPDATE fulfillsync_products SET change_xid = pg_current_xact_id() WHERE reference_id = NEW.product_reference_id;
  END IF;
  IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.product_reference_id IS DISTINCT FROM NEW.product_reference_id) THEN
    UPDATE fulfillsync_products SET change_xid = pg_current_xact_id() WHERE reference_id = OLD.product_reference_id;
  END IF;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER fulfillsync_variants_xid AFTER INSERT OR UPDATE OR DELETE ON fulfillsync_variants
  FOR EACH ROW EXECUTE FUNCTION fulfillsync_variant_xid();
CREATE OR REPLACE TRIGGER fulfillsync_products_notify AFTER INSERT OR UPDATE OR DELETE ON fulfillsync_products
  FOR EACH STATEMENT EXECUTE FUNCTION fulfillsync_notify();
CREATE OR REPLACE TRIGGER fulfillsync_variants_notify AFTER INSERT OR UPDATE OR DELETE ON fulfillsync_variants
  FOR EACH STATEMENT EXECUTE FUNCTION fulfillsync_notify();
