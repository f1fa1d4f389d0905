-- The quick start's merchant database. WAL lets the merchant application and fulfillsyncd read and
-- write side by side.
PRAGMA journal_mode = WAL;
