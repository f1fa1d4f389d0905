-- The change order of the PostgreSQL source tables: every order and return records the id of the
-- transaction that last wrote it or one of its lines (pg_current_xact_id(), xid8), and each commit
-- that changed one notifies the channel fulfillsync_changes. The daemon reads what changed since the
-- previous read's snapshot horizon, so a transaction that commits late, however long it ran, is read
-- once it commits (schema/merchant/README.md). Idempotent: the connector's install_change_log runs it
-- in one transaction, in the source schema (search_path); the shop application's writes wait for it.

ALTER TABLE fulfillsync_orders ADD COLUMN IF NOT EXISTS change_xid xid8 NOT NULL DEFAULT pg_current_xact_id();
ALTER TABLE fulfillsync_returns ADD COLUMN IF NOT EXISTS change_xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX IF NOT EXISTS fulfillsync_orders_by_xid ON fulfillsync_orders (change_xid, reference_id);
CREATE INDEX IF NOT EXISTS fulfillsync_returns_by_xid ON fulfillsync_returns (change_xid, reference_id);

-- Set on every insert and update, whatever the application writes in the column.
CREATE OR REPLACE FUNCTION fulfillsync_record_xid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.change_xid := pg_current_xact_id();
  RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER fulfillsync_orders_xid BEFORE INSERT OR UPDATE ON fulfillsync_orders
  FOR EACH ROW EXECUTE FUNCTION fulfillsync_record_xid();
CREATE OR REPLACE TRIGGER fulfillsync_returns_xid BEFORE INSERT OR UPDATE ON fulfillsync_returns
  FOR EACH ROW EXECUTE FUNCTION fulfillsync_record_xid();

-- A line changed marks its order or return as written by this transaction.
CREATE OR REPLACE FUNCTION fulfillsync_order_line_xid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'DELETE' THEN
    UPDATE fulfillsync_orders SET change_xid = pg_current_xact_id() WHERE reference_id = NEW.order_reference_id;
  END IF;
  IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.order_reference_id IS DISTINCT FROM NEW.order_reference_id) THEN
    UPDATE fulfillsync_orders SET change_xid = pg_current_xact_id() WHERE reference_id = OLD.order_reference_id;
  END IF;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER fulfillsync_order_lines_xid AFTER INSERT OR UPDATE OR DELETE ON fulfillsync_order_lines
  FOR EACH ROW EXECUTE FUNCTION fulfillsync_order_line_xid();

CREATE OR REPLACE FUNCTION fulfillsync_return_line_xid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'DELETE' THEN
    UPDATE fulfillsync_returns SET change_xid = pg_current_xact_id() WHERE reference_id = NEW.return_reference_id;
  END IF;
  IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.return_reference_id IS DISTINCT FROM NEW.return_reference_id) THEN
    UPDATE fulfillsync_returns SET change_xid = pg_current_xact_id() WHERE reference_id = OLD.return_reference_id;
  END IF;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER fulfillsync_return_lines_xid AFTER INSERT OR UPDATE OR DELETE ON fulfillsync_return_lines
  FOR EACH ROW EXECUTE FUNCTION fulfillsync_return_line_xid();

-- One notification per table and commit (PostgreSQL folds equal ones), delivered when it commits.
CREATE OR REPLACE FUNCTION fulfillsync_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('fulfillsync_changes', TG_TABLE_NAME);
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER fulfillsync_orders_notify AFTER INSERT OR UPDATE OR DELETE ON fulfillsync_orders
  FOR EACH STATEMENT EXECUTE FUNCTION fulfillsync_notify();
CREATE OR REPLACE TRIGGER fulfillsync_returns_notify AFTER INSERT OR UPDATE OR DELETE ON fulfillsync_returns
  FOR EACH STATEMENT EXECUTE FUNCTION fulfillsync_notify();
