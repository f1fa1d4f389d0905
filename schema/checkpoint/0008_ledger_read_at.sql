-- Schema version 8: when the body of a pending entry was last known to match its source row (built
-- from it, or the row read again unchanged). A create whose body is older than a moment is read
-- again before it is sent; updated_at cannot tell, since a throttled send put back as pending moves
-- it without reading the row. Existing entries start from updated_at.
ALTER TABLE outbound_ledger ADD COLUMN read_at TEXT;
UPDATE outbound_ledger SET read_at = updated_at;
