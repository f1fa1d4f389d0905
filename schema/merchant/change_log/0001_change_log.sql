-- The change log (schema/merchant/README.md, "How the daemon reads"): every insert, update and
-- delete of an order, a return or one of their lines adds an entry naming the order or return. Its
-- seq is assigned by SQLite, not by a clock. SQLite lets one transaction write at a time, so seq
-- order is commit order: a stepped clock or a late commit cannot put a change behind one already read.
-- AUTOINCREMENT: the daemon deletes the entries it has handled, and a plain INTEGER PRIMARY KEY would
-- then hand a deleted (already passed) number out again.
--
-- Idempotent: applying it again changes nothing. `fulfillsyncd upgrade-source` applies it in one
-- transaction, safe while the shop application writes (its writes wait for the lock, then are logged).
CREATE TABLE IF NOT EXISTS fulfillsync_changes (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  source_table TEXT NOT NULL,  -- 'fulfillsync_orders' or 'fulfillsync_returns'
  reference_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS fulfillsync_changes_by_table ON fulfillsync_changes (source_table, seq);

CREATE TRIGGER IF NOT EXISTS fulfillsync_orders_log_insert AFTER INSERT ON fulfillsync_orders BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) VALUES ('fulfillsync_orders', NEW.reference_id);
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_orders_log_update AFTER UPDATE ON fulfillsync_orders BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) SELECT 'fulfillsync_orders', NEW.reference_id
  UNION SELECT 'fulfillsync_orders', OLD.reference_id;
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_orders_log_delete AFTER DELETE ON fulfillsync_orders BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) VALUES ('fulfillsync_orders', OLD.reference_id);
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_order_lines_log_insert AFTER INSERT ON fulfillsync_order_lines BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) VALUES ('fulfillsync_orders', NEW.order_reference_id);
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_order_lines_log_update AFTER UPDATE ON fulfillsync_order_lines BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) SELECT 'fulfillsync_orders', NEW.order_reference_id
  UNION SELECT 'fulfillsync_orders', OLD.order_reference_id;
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_order_lines_log_delete AFTER DELETE ON fulfillsync_order_lines BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) VALUES ('fulfillsync_orders', OLD.order_reference_id);
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_returns_log_insert AFTER INSERT ON fulfillsync_returns BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) VALUES ('fulfillsync_returns', NEW.reference_id);
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_returns_log_update AFTER UPDATE ON fulfillsync_returns BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) SELECT 'fulfillsync_returns', NEW.reference_id
  UNION SELECT 'fulfillsync_returns', OLD.reference_id;
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_returns_log_delete AFTER DELETE ON fulfillsync_returns BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) VALUES ('fulfillsync_returns', OLD.reference_id);
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_return_lines_log_insert AFTER INSERT ON fulfillsync_return_lines BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) VALUES ('fulfillsync_returns', NEW.return_reference_id);
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_return_lines_log_update AFTER UPDATE ON fulfillsync_return_lines BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) SELECT 'fulfillsync_returns', NEW.return_reference_id
  UNION SELECT 'fulfillsync_returns', OLD.return_reference_id;
END;
CREATE TRIGGER IF NOT EXISTS fulfillsync_return_lines_log_delete AFTER DELETE ON fulfillsync_return_lines BEGIN
  INSERT INTO fulfillsync_changes (source_table, reference_id) VALUES ('fulfillsync_returns', OLD.return_reference_id);
END;

-- How far the daemon has deleted handled entries, per source table. A checkpoint store restored
-- from an older copy saved a position below it: the log can no longer say what changed since, and
-- the daemon reads those tables again by updated_at before it goes on by the log.
CREATE TABLE IF NOT EXISTS fulfillsync_changes_forgotten (
  source_table TEXT PRIMARY KEY,  -- 'fulfillsync_orders' or 'fulfillsync_returns'
  through      INTEGER NOT NULL   -- the highest seq deleted
);
