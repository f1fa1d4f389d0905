-- The contract's source tables as a reference DDL (schema/merchant/README.md): for a shop whose
-- application can write these tables directly. A shop with its own schema creates views with these
-- names and columns instead. The triggers keep updated_at moving on every change to a row or its lines;
-- drop them if the application sets updated_at itself. Load change_log/0001_change_log.sql after this
-- file: the daemon then finds changes by the change log's sequence, whatever updated_at says.

CREATE TABLE fulfillsync_orders (
  reference_id            TEXT PRIMARY KEY,
  order_number            TEXT,
  shipping_method         TEXT NOT NULL,
  type                    TEXT,
  sales_channel           TEXT,
  origin_platform_program TEXT,
  gift_message            TEXT,
  purchase_date           TEXT,
  location_id             INTEGER,
  total_price             TEXT,
  recipient_name          TEXT,
  recipient_email         TEXT,
  recipient_phone         TEXT,
  address1                TEXT,
  address2                TEXT,
  city                    TEXT,
  state                   TEXT,
  zip_code                TEXT,
  country                 TEXT,
  company_name            TEXT,
  tags                    TEXT,
  cancel_requested        INTEGER NOT NULL DEFAULT 0,
  updated_at              TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX fulfillsync_orders_by_change ON fulfillsync_orders (updated_at, reference_id);

CREATE TABLE fulfillsync_order_lines (
  order_reference_id   TEXT NOT NULL REFERENCES fulfillsync_orders (reference_id),
  line_number          INTEGER NOT NULL,
  product_id           INTEGER,
  product_reference_id TEXT,
  product_name         TEXT,
  quantity             INTEGER NOT NULL,
  external_line_id     INTEGER,
  unit_of_measure      TEXT,
  PRIMARY KEY (order_reference_id, line_number)
);

CREATE TABLE fulfillsync_returns (
  reference_id            TEXT PRIMARY KEY,
  fulfillment_center_id   INTEGER,
  fulfillment_center_name TEXT,
  original_shipment_id    INTEGER,
  tracking_number         TEXT,
  tags                    TEXT,
  updated_at              TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX fulfillsync_returns_by_change ON fulfillsync_returns (updated_at, reference_id);

CREATE TABLE fulfillsync_return_lines (
  return_reference_id TEXT NOT NULL REFERENCES fulfillsync_returns (reference_id),
  line_number         INTEGER NOT NULL,
  inventory_id        INTEGER,  -- the provider's inventory id, or `sku`
  quantity            INTEGER NOT NULL,
  requested_action    TEXT,
  sku                 TEXT,     -- a SKU, resolved through {prefix}variant_sync (pull_stock); last, as added
  PRIMARY KEY (return_reference_id, line_number)
);

-- A lot to watch by inventory id, or by SKU. (Not INTEGER PRIMARY KEY: SQLite would fill a missing
-- inventory_id with a row id.)
CREATE TABLE fulfillsync_watched_inventory (
  inventory_id INTEGER UNIQUE,
  sku          TEXT UNIQUE,
  CHECK (inventory_id IS NOT NULL OR sku IS NOT NULL)
);

-- Any change to an order, a return or one of their lines moves the row's updated_at: that is how
-- fulfillsyncd sees it (the application could equally set updated_at itself).
CREATE TRIGGER fulfillsync_orders_touch AFTER UPDATE ON fulfillsync_orders
WHEN NEW.updated_at IS OLD.updated_at BEGIN
  UPDATE fulfillsync_orders SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE reference_id = NEW.reference_id;
END;
CREATE TRIGGER fulfillsync_order_lines_insert AFTER INSERT ON fulfillsync_order_lines BEGIN
  UPDATE fulfillsync_orders SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE reference_id = NEW.order_reference_id;
END;
CREATE TRIGGER fulfillsync_order_lines_update AFTER UPDATE ON fulfillsync_order_lines BEGIN
  UPDATE fulfillsync_orders SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  WHERE reference_id IN (OLD.order_reference_id, NEW.order_reference_id);
END;
CREATE TRIGGER fulfillsync_order_lines_delete AFTER DELETE ON fulfillsync_order_lines BEGIN
  UPDATE fulfillsync_orders SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE reference_id = OLD.order_reference_id;
END;
CREATE TRIGGER fulfillsync_returns_touch AFTER UPDATE ON fulfillsync_returns
WHEN NEW.updated_at IS OLD.updated_at BEGIN
  UPDATE fulfillsync_returns SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE reference_id = NEW.reference_id;
END;
CREATE TRIGGER fulfillsync_return_lines_insert AFTER INSERT ON fulfillsync_return_lines BEGIN
  UPDATE fulfillsync_returns SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE reference_id = NEW.return_reference_id;
END;
CREATE TRIGGER fulfillsync_return_lines_update AFTER UPDATE ON fulfillsync_return_lines BEGIN
  UPDATE fulfillsync_returns SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  WHERE reference_id IN (OLD.return_reference_id, NEW.return_reference_id);
END;
CREATE TRIGGER fulfillsync_return_lines_delete AFTER DELETE ON fulfillsync_return_lines BEGIN
  UPDATE fulfillsync_returns SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE reference_id = OLD.return_reference_id;
END;

-- The catalog (schema/merchant/README.md, "Catalog"): products and their variants, pushed by the
-- push_products job. Only needed where that job is on; its change log entries are in
-- catalog_change_log.sql (load it after change_log/0001_change_log.sql).
CREATE TABLE fulfillsync_products (
  reference_id TEXT PRIMARY KEY,      -- the merchant's key of the product (never sent)
  name         TEXT NOT NULL,         -- 1 to 400 characters
  type         TEXT,                  -- at most 50 characters
  taxonomy_id  INTEGER,               -- a node of GET /taxonomy/{id}
  updated_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX fulfillsync_products_by_change ON fulfillsync_products (updated_at, reference_id);

CREATE TABLE fulfillsync_variants (
  sku                       TEXT PRIMARY KEY,  -- 1 to 100 characters, unique within the merchant
  product_reference_id      TEXT NOT NULL REFERENCES fulfillsync_products (reference_id),
  name                      TEXT NOT NULL,     -- 1 to 400 characters
  gtin                      TEXT,              -- at most 14 characters
  upc                       TEXT,              -- at most 12 characters
  status                    TEXT,              -- 'Active' or 'Inactive'
  weight                    REAL,              -- in weight_unit
  weight_unit               TEXT,              -- oz (when NULL), lb, g, kg
  length                    REAL,              -- in dimension_unit
  width                     REAL,
  height                    REAL,
  dimension_unit            TEXT,              -- in (when NULL), cm, mm, ft, m
  customs_country_of_origin TEXT,              -- ISO 3166-1 alpha-2
  customs_hs_tariff_code    TEXT,              -- at most 20 characters
  customs_description       TEXT,              -- at most 500 characters
  customs_value             TEXT,              -- decimal text; whole before API version 2026-07
  customs_currency          TEXT,              -- ISO 4217
  is_lot                    INTEGER,           -- 0 or 1: tracked by lot
  minimum_shelf_life_days   INTEGER,           -- 0 to 3650
  updated_at                TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX fulfillsync_variants_by_product ON fulfillsync_variants (product_reference_id, sku);

-- A change to a product or one of its variants moves the product's updated_at.
CREATE TRIGGER fulfillsync_products_touch AFTER UPDATE ON fulfillsync_products
WHEN NEW.updated_at IS OLD.updated_at BEGIN
  UPDATE fulfillsync_products SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE reference_id = NEW.reference_id;
END;
CREATE TRIGGER fulfillsync_variants_touch_insert AFTER INSERT ON fulfillsync_variants BEGIN
  UPDATE fulfillsync_products SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE reference_id = NEW.product_reference_id;
END;
CREATE TRIGGER fulfillsync_variants_touch_update AFTER UPDATE ON fulfillsync_variants BEGIN
  UPDATE fulfillsync_products SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  WHERE reference_id IN (OLD.product_reference_id, NEW.product_reference_id);
END;
CREATE TRIGGER fulfillsync_variants_touch_delete AFTER DELETE ON fulfillsync_variants BEGIN
  UPDATE fulfillsync_products SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE reference_id = OLD.product_reference_id;
END;
