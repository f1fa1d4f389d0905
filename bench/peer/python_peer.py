#!/usr/bin/env python3
"""A hand-written order push in Python's standard library, as a merchant developer would write it.

Reads fulfillsync_orders and fulfillsync_order_lines (schema/merchant/source_tables.sql) in pages of
500 rows, one read transaction a page, sends one `POST /{version}/order` per order on one keep-alive
connection, one request at a time, and records each outcome in peer_order_sync, one write transaction
a page. Orders already in peer_order_sync are skipped, so a second run sends nothing twice. The body
is the one fulfillsyncd sends for the same row (daemon/src/mapping/request_mapping.cpp). Prints one
line of JSON: {"peer", "orders", "failures", "wall_seconds", ...}.
"""

import argparse
import datetime
import http.client
import json
import re
import sqlite3
import sys
import time
import urllib.parse

ORDER_COLUMNS = (
    "reference_id, order_number, shipping_method, type, sales_channel, origin_platform_program, gift_message, "
    "purchase_date, location_id, total_price, recipient_name, recipient_email, recipient_phone, address1, "
    "address2, city, state, zip_code, country, company_name, tags"
)
LINE_COLUMNS = (
    "order_reference_id, product_id, product_reference_id, product_name, quantity, external_line_id, unit_of_measure"
)
RESULT_TABLE = """
CREATE TABLE IF NOT EXISTS peer_order_sync (
  reference_id TEXT PRIMARY KEY,
  remote_id    INTEGER,
  state        TEXT NOT NULL,  -- created, duplicate, invalid, failed
  error        TEXT,
  synced_at    TEXT NOT NULL
)"""
MONEY = re.compile(r"^(0|[1-9][0-9]*)(\.[0-9]+)?$")
MAX_ATTEMPTS = 5  # per order, for lost connections and 5xx; 429s are waited out and not counted


def text(value):
    """Text as the daemon reads it: integers as their digits, empty as absent."""
    if value is None:
        return None
    value = str(value)
    return value or None


def iso8601(value):
    """A date-time as the daemon sends it: UTC, milliseconds, +00:00. Naive times are UTC."""
    when = datetime.datetime.fromisoformat(value)
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    when = when.astimezone(datetime.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}+00:00"


def member(key, value):
    return json.dumps(key) + ":" + json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def order_body(row, lines):
    """The `POST /order` body for one row, members in the daemon's order; money as a JSON number."""
    (reference_id, order_number, shipping_method, type_, sales_channel, origin_platform_program, gift_message,
     purchase_date, location_id, total_price, recipient_name, recipient_email, recipient_phone, address1,
     address2, city, state, zip_code, country, company_name, tags) = row
    for name, value in (("shipping_method", shipping_method), ("recipient_name", recipient_name),
                        ("address1", address1), ("city", city), ("zip_code", zip_code), ("country", country)):
        if text(value) is None:
            raise ValueError(f"{name} is required")
    if not lines:
        raise ValueError("the order has no lines")
    products = []
    for product_id, product_reference_id, product_name, quantity, external_line_id, unit in lines:
        if product_id is None and text(product_reference_id) is None:
            raise ValueError("a line needs product_id or product_reference_id")
        line = {}
        for key, value in (("id", product_id), ("reference_id", text(product_reference_id)),
                           ("name", text(product_name)), ("quantity", quantity),
                           ("external_line_id", external_line_id),
                           ("quantity_unit_of_measure_code", text(unit))):
            if value is not None:
                line[key] = value
        products.append(line)
    address = {}
    for key, value in (("address1", address1), ("address2", address2), ("city", city),
                       ("company_name", company_name), ("country", country), ("state", state),
                       ("zip_code", zip_code)):
        if text(value) is not None:
            address[key] = text(value)
    recipient = {"name": text(recipient_name)}
    if text(recipient_email) is not None:
        recipient["email"] = text(recipient_email)
    if text(recipient_phone) is not None:
        recipient["phone_number"] = text(recipient_phone)
    recipient["address"] = address

    parts = [member("reference_id", reference_id), member("shipping_method", text(shipping_method)),
             member("products", products), member("recipient", recipient)]
    if total_price is not None:
        money = str(total_price)
        if not MONEY.match(money):
            raise ValueError(f"total_price is not a decimal number: {money!r}")
        parts.append('"financials":{"total_price":' + money + "}")
    optional = (("gift_message", text(gift_message)), ("location_id", location_id),
                ("order_number", text(order_number)), ("origin_platform_program", text(origin_platform_program)),
                ("purchase_date", iso8601(purchase_date) if purchase_date else None),
                ("sales_channel", text(sales_channel)),
                ("tags", [{"name": k, "value": v} for k, v in json.loads(tags).items()] if tags else None),
                ("type", text(type_)))
    parts += [member(key, value) for key, value in optional if value is not None]
    return ("{" + ",".join(parts) + "}").encode()


class Api:
    """One keep-alive connection; a 429 is waited out as Retry-After says."""

    def __init__(self, base_url, version, token):
        url = urllib.parse.urlsplit(base_url)
        self.host, self.port, self.https = url.hostname, url.port, url.scheme == "https"
        self.prefix = url.path.rstrip("/") + "/" + version
        self.headers = {"Authorization": "Bearer " + token, "Accept": "application/json",
                        "User-Agent": "merchant-sync/1.0"}
        self.connection = None
        self.requests = 0
        self.throttled = 0

    def connect(self):
        kind = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        self.connection = kind(self.host, self.port, timeout=30)

    def request(self, method, path, body=None, headers=None):
        """(status, body bytes); retries a lost connection and a 5xx a few times, waits out 429s."""
        all_headers = dict(self.headers, **(headers or {}))
        if body is not None:
            all_headers["Content-Type"] = "application/json"
        attempt = 0
        while True:
            attempt += 1
            try:
                if self.connection is None:
                    self.connect()
                self.requests += 1
                self.connection.request(method, self.prefix + path, body=body, headers=all_headers)
                response = self.connection.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException) as error:
                self.connection.close()
                self.connection = None
                if attempt >= MAX_ATTEMPTS:
                    return 0, str(error).encode()
                time.sleep(0.1 * 2 ** attempt)
                continue
            if response.status == 429:
                self.throttled += 1
                attempt -= 1
                time.sleep(float(response.getheader("x-retry-after") or response.getheader("Retry-After") or 1))
                continue
            if response.status >= 500 and attempt < MAX_ATTEMPTS:
                time.sleep(0.1 * 2 ** attempt)
                continue
            return response.status, data


def writable_channel(api, configured):
    if configured:
        return configured
    status, data = api.request("GET", "/channel")
    if status != 200:
        raise SystemExit(f"GET /channel answered {status}: {data[:200]!r}")
    for channel in json.loads(data)["items"]:
        if "orders_write" in channel.get("scopes", []):
            return channel["id"]
    raise SystemExit("no channel with the orders_write scope")


def read_page(db, after, page_size):
    """One page of unsent orders after `after` and their lines, in one read transaction."""
    with db:
        db.execute("BEGIN")
        orders = db.execute(
            f"SELECT {ORDER_COLUMNS} FROM fulfillsync_orders o WHERE o.reference_id > ? AND o.cancel_requested = 0 "
            "AND NOT EXISTS (SELECT 1 FROM peer_order_sync s WHERE s.reference_id = o.reference_id "
            "AND s.state <> 'failed') "
            "ORDER BY o.reference_id LIMIT ?", (after, page_size)).fetchall()
        lines = {}
        if orders:
            for line in db.execute(
                    f"SELECT {LINE_COLUMNS} FROM fulfillsync_order_lines "
                    "WHERE order_reference_id >= ? AND order_reference_id <= ? "
                    "ORDER BY order_reference_id, line_number", (orders[0][0], orders[-1][0])):
                lines.setdefault(line[0], []).append(line[1:])
    return orders, lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="the merchant SQLite database")
    parser.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8080")
    parser.add_argument("--token-file", required=True, help="file holding the API token")
    parser.add_argument("--api-version", default="2026-07")
    parser.add_argument("--channel-id", type=int, help="default: the first channel with orders_write")
    parser.add_argument("--page-size", type=int, default=500)
    options = parser.parse_args()

    started = time.monotonic()
    with open(options.token_file) as f:
        token = f.read().strip()
    api = Api(options.base_url, options.api_version, token)
    channel = {"service_channel_id": str(writable_channel(api, options.channel_id))}
    db = sqlite3.connect(options.db, timeout=30, isolation_level=None)
    db.execute(RESULT_TABLE)

    created = failures = 0
    after = ""
    while True:
        orders, lines = read_page(db, after, options.page_size)
        if not orders:
            break
        results = []
        for row in orders:
            reference_id = row[0]
            now = datetime.datetime.now(datetime.timezone.utc).isoformat()
            try:
                body = order_body(row, lines.get(reference_id, []))
            except (ValueError, TypeError, json.JSONDecodeError) as error:
                failures += 1
                results.append((reference_id, None, "invalid", str(error), now))
                continue
            status, data = api.request("POST", "/order", body, channel)
            if status == 201:
                created += 1
                results.append((reference_id, json.loads(data)["id"], "created", None, now))
            elif status == 422 and b"existing ReferenceId" in data:
                results.append((reference_id, None, "duplicate", data.decode(errors="replace")[:500], now))
            else:
                failures += 1
                results.append((reference_id, None, "failed", f"{status} {data.decode(errors='replace')[:500]}", now))
        with db:
            db.execute("BEGIN")
            db.executemany("INSERT OR REPLACE INTO peer_order_sync VALUES (?, ?, ?, ?, ?)", results)
        after = orders[-1][0]

    print(json.dumps({"peer": "python", "orders": created, "failures": failures,
                      "wall_seconds": round(time.monotonic() - started, 3), "requests": api.requests,
                      "throttled": api.throttled}))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
