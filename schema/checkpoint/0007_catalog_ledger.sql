-- Schema version 7: the outbound ledger holds the catalog too: `product_create` (POST /product with
-- its variants, `created`) and `product_update` (the changes of a created product, `applied` each
-- time, and pending again with the next version). SQLite cannot change a CHECK constraint in place,
-- so the table is rebuilt.

CREATE TABLE outbound_ledger_v7 (
  kind              TEXT NOT NULL CHECK (kind IN ('order_create', 'order_cancel', 'return_create', 'product_create',
                                                   'product_update')),
  source_key        TEXT NOT NULL,   -- the merchant's reference id of the order, return or product
  content_hash      TEXT NOT NULL,   -- hash of the latest source row version seen
  state             TEXT NOT NULL
                    CHECK (state IN ('pending', 'in_flight', 'created', 'applied', 'rejected', 'unknown', 'withdrawn')),
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
  PRIMARY KEY (kind, source_key),
  CHECK (state <> 'created' OR kind NOT IN ('order_cancel', 'product_update')),
  CHECK (state <> 'applied' OR kind IN ('order_cancel', 'product_update'))
);
INSERT INTO outbound_ledger_v7 (kind, source_key, content_hash, state, attempts, body, remote_id, remote_status,
                                last_error, note, result_pending, created_at, updated_at, remote_created_at, sent_at)
  SELECT kind, source_key, content_hash,
         state,
         attempts, body, remote_id, remote_status, last_error, note, result_pending, created_at, updated_at,
         remote_created_at, sent_at
  FROM outbound_ledger;
DROP TABLE outbound_ledger;
ALTER TABLE outbound_ledger_v7 RENAME TO outbound_ledger;
CREATE INDEX outbound_ledger_by_state ON outbound_ledger (kind, state, updated_at);
CREATE INDEX outbound_ledger_unwritten ON outbound_ledger (kind, source_key) WHERE result_pending = 1;
