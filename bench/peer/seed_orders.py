#!/usr/bin/env python3
"""Creates a merchant database with the source tables and N orders, as push_bench seeds them.

The rows are those of seed_orders() in bench/common/bench_support.cpp: the same reference ids
(PREFIX + 7 digits), one or two lines each over the sandbox's demo products.
Usage: seed_orders.py DB COUNT [PREFIX]
"""

import pathlib
import sqlite3
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PRODUCTS = "(0, 'TSHIRT-L', 'Organic Cotton T-Shirt L'), (1, 'BATT-AA4', 'AA Battery 4-pack'), " \
           "(2, 'TOTE-CANVAS', 'Canvas Tote Bag')"


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    db_path, count = sys.argv[1], int(sys.argv[2])
    prefix = sys.argv[3] if len(sys.argv) == 4 else "PEER-"
    db = sqlite3.connect(db_path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.executescript((ROOT / "schema/merchant/source_tables.sql").read_text())
    db.executescript((ROOT / "schema/merchant/change_log/0001_change_log.sql").read_text())
    db.execute("BEGIN")
    db.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1) "
        "INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, type, recipient_name, address1, "
        "city, state, zip_code, country) "
        "SELECT printf('%s%07d', ?2, i), printf('#%d', i), 'Standard', 'DTC', printf('Customer %d', i), "
        "printf('%d Main Street', i), 'Austin', 'TX', printf('%05d', 10000 + i % 90000), 'US' FROM n",
        (count, prefix))
    db.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1), "
        "line(k) AS (VALUES (1), (2)), product(slot, ref, name) AS (VALUES " + PRODUCTS + ") "
        "INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_reference_id, product_name, "
        "quantity) "
        "SELECT printf('%s%07d', ?2, i), k, p.ref, p.name, 1 + (i + k) % 3 "
        "FROM n JOIN line ON k <= 1 + i % 2 JOIN product p ON p.slot = (i + k) % 3",
        (count, prefix))
    db.execute("COMMIT")


if __name__ == "__main__":
    main()
