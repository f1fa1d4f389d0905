-- Schema version 4: the outbound ledger keeps
--  - when the provider created the order or return (its `created_date` or `insert_date`), which the
--    merchant's result tables show as `remote_created_at`;
--  - when the entry's request last left (`sent_at`, set as it is marked in flight).
ALTER TABLE outbound_ledger ADD COLUMN remote_created_at TEXT;
ALTER TABLE outbound_ledger ADD COLUMN sent_at TEXT;
