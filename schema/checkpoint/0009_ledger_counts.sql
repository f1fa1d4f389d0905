-- Schema version 9: the outbound ledger's entries counted by kind and state, kept by triggers. The
-- ledger keeps every entry it ever sent, so counting it (the progress report every few seconds, the
-- metrics, `status`) read all of them, a cost that grew with the hours a daemon had run; the counts
-- are a few rows, moved by every insert, change of state and delete, whichever connection makes it.
CREATE TABLE outbound_ledger_counts (
  kind  TEXT NOT NULL,
  state TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (kind, state)
) WITHOUT ROWID;

INSERT INTO outbound_ledger_counts (kind, state, count)
  SELECT kind, state, count(*) FROM outbound_ledger GROUP BY kind, state;

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
