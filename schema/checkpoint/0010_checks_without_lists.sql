-- Schema version 10: the same constraints, written as comparisons instead of IN lists. SQLite
-- checks a constant list of more than two values by building a temporary B-tree of it, each time
-- the constraint is checked: twice for every entry offered and once for every change of state, a
-- tenth of the daemon's CPU in a bulk push (bench/README.md, "The ledger's constraints"). SQLite
-- cannot change a CHECK constraint in place, so both tables are rebuilt; the ledger's counting
-- triggers go with the old table and are made again.

CREATE TABLE outbound_ledger_v10 (
  kind              TEXT NOT NULL CHECK (kind = 'order_create' OR kind = 'order_cancel' OR kind = 'return_create' OR
                                         kind = 'product_create' OR kind = 'product_update'),
  source_key        TEXT NOT NULL,   -- the merchant's reference id of the order, return or product
  content_hash      TEXT NOT NULL,   -- hash of the latest source row version seen
  state             TEXT NOT NULL
                    CHECK (state = 'pending' OR state = 'in_flight' OR state = 'created' OR state = 'applied' OR
                           state = 'rejected' OR state = 'unknown' OR state = 'withdrawn'),
  attempts          INTEGER NOT NULL DEFAULT 0,
  body              BLOB,            -- built once per row version and resent unchanged
  remote_id         INTEGER,
  remote_status     TEXT,
  last_error        TEXT,
  note              TEXT,
  result_pending    INTEGER NOT NULL DEFAULT 1,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  remote_created_at TEXT,
  sent_at           TEXT,
  read_at           TEXT,
  PRIMARY KEY (kind, source_key),
  CHECK (state <> 'created' OR (kind <> 'order_cancel' AND kind <> 'product_update')),
  CHECK (state <> 'applied' OR kind = 'order_cancel' OR kind = 'product_update')
);
INSERT INTO outbound_ledger_v10 (kind, source_key, content_hash, state, attempts, body, remote_id, remote_status,
                                 last_error, note, result_pending, created_at, updated_at, remote_created_at, sent_at,
                                 read_at)
  SELECT kind, source_key, content_hash, state, attempts, body, remote_id, remote_status, last_error, note,
         result_pending, created_at, updated_at, remote_created_at, sent_at, read_at
  FROM outbound_ledger;
DROP TABLE outbound_ledger;
ALTER TABLE outbound_ledger_v10 RENAME TO outbound_ledger;
CREATE INDEX outbound_ledger_by_state ON outbound_ledger (kind, state, updated_at);
CREATE INDEX outbound_ledger_unwritten ON outbound_ledger (kind, source_key) WHERE result_pending = 1;

-- As in version 9.
CREATE TRIGGER outbound_ledger_counted_insert AFTER INSERT ON outbound_ledger BEGIN
  INSERT INTO outbound_ledger_counts (kind, state, count) VALUES (NEW.kind, NEW.state, 1)
    ON CONFLICT (kind, state) DO UPDATE SET count = count + 1;
END;

CREATE TRIGGER outbound_ledger_counted_delete AFTER DELETE ON outbound_ledger BEGIN
  UPDATE outbound_ledger_counts SET count = count - 1 WHERE kind = OLD.kind AND state = OLD.state;
END;

CREATE TRIGGER outbound_ledger_counted_update AFTER UPDATE OF kind, state ON outbound_ledger
  WHEN OLD.kind IS NOT NEW.kind OR OLD.state IS NOT NEW.state BEGIN
  UPDATE outbound_ledger_counts SET count = count - 1 WHERE kind = OLD.kind AND state = OLD.state;
  INSERT INTO outbound_ledger_counts (kind, state, count) VALUES (NEW.kind, NEW.state, 1)
    ON CONFLICT (kind, state) DO UPDATE SET count = count + 1;
END;

CREATE TABLE tracking_marks_v10 (
  shipment_id     INTEGER PRIMARY KEY,
  order_id        INTEGER NOT NULL,  -- the provider's order: how an unknown mark is looked up
  state           TEXT NOT NULL
                  CHECK (state = 'pending' OR state = 'in_flight' OR state = 'marked' OR state = 'unknown'),
  attempts        INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT,              -- the provider's reason for the last failed attempt
  next_attempt_at TEXT NOT NULL,     -- a pending mark is not sent before
  result_pending  INTEGER NOT NULL DEFAULT 0,  -- the merchant's tracking row does not show the state yet
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
);
INSERT INTO tracking_marks_v10 (shipment_id, order_id, state, attempts, last_error, next_attempt_at, result_pending,
                                created_at, updated_at)
  SELECT shipment_id, order_id, state, attempts, last_error, next_attempt_at, result_pending, created_at, updated_at
  FROM tracking_marks;
DROP TABLE tracking_marks;
ALTER TABLE tracking_marks_v10 RENAME TO tracking_marks;
CREATE INDEX tracking_marks_due ON tracking_marks (state, next_attempt_at);
CREATE INDEX tracking_marks_unwritten ON tracking_marks (shipment_id) WHERE result_pending = 1;
