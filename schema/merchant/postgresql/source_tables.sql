-- The contract's source tables in PostgreSQL, as a reference DDL (schema/merchant/README.md): for a
-- shop whose application can write these tables directly. A shop with its own schema creates views
-- with these names and columns instead. Create them in the schema merchant.postgresql.source_schema
-- names (SET search_path first: the names here are unqualified). The triggers keep updated_at moving on
-- every change to a row or its lines; drop them if the application sets updated_at itself. Then load
-- change_order/0001_change_xid.sql as the tables' owner: the daemon finds changes by
-- the writing transaction's id, whatever updated_at says, and can be woken by NOTIFY.

CREATE TABLE fulfillsync_orders (
  reference_id            text PRIMARY KEY,
  order_number            text,
  shipping_method         text NOT NULL,
  type                    text,
  sales_channel           text,
  origin_platform_program text,
  gift_message            text,
  purchase_date           text,        -- ISO 8601, as the provider takes it
  location_id             bigint,
  total_price             text,        -- decimal text, as stored: never rounded through a float
  recipient_name          text,
  recipient_email         text,
  recipient_phone         text,
  address1                text,
  address2                text,
  city                    text,
  state                   text,
  zip_code                text,
  country                 text,
  company_name            text,
  tags                    text,
  cancel_requested        integer NOT NULL DEFAULT 0,
  updated_at              timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX fulfillsync_orders_by_change ON fulfillsync_orders (updated_at, reference_id);
-- The daemon reads in key order by bytes (COLLATE "C", whatever the database's collation): a first
-- start over a table that holds rows already, and the reconciliation sweep. Without this index each
-- page of that read is a scan and a sort of the whole table.
CREATE INDEX fulfillsync_orders_by_key ON fulfillsync_orders (reference_id COLLATE "C");

CREATE TABLE fulfillsync_order_lines (
  order_reference_id   text NOT NULL REFERENCES fulfillsync_orders (reference_id),
  line_number          integer NOT NULL,
  product_id           bigint,
  product_reference_id text,
  product_name         text,
  quantity             integer NOT NULL,
  external_line_id     bigint,
  unit_of_measure      text,
  PRIMARY KEY (order_reference_id, line_number)
);

CREATE TABLE fulfillsync_returns (
  reference_id            text PRIMARY KEY,
  fulfillment_center_id   bigint,
  fulfillment_center_name text,
  original_shipment_id    bigint,
  tracking_number         text,
  tags                    text,
  updated_at              timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX fulfillsync_returns_by_change ON fulfillsync_returns (updated_at, reference_id);
CREATE INDEX fulfillsync_returns_by_key ON fulfillsync_returns (reference_id COLLATE "C");

CREATE TABLE fulfillsync_return_lines (
  return_reference_id text NOT NULL REFERENCES fulfillsync_returns (reference_id),
  line_number         integer NOT NULL,
  inventory_id        bigint,  -- the provider's inventory id, or `sku`
  quantity            integer NOT NULL,
  requested_action    text,
  sku                 text,    -- a SKU, resolved through {prefix}variant_sync (pull_stock); last, as added
  PRIMARY KEY (return_reference_id, line_number)
);

-- A lot to watch by inventory id, or by SKU.
CREATE TABLE fulfillsync_watched_inventory (
  inventory_id bigint UNIQUE,
  sku          text UNIQUE,
  CHECK (inventory_id IS NOT NULL OR sku IS NOT NULL)
);

-- Any change to an order, a return or one of their lines moves the row's updated_at. clock_timestamp(),
-- not now(): now() is the transaction's start, so a long transaction would write a time long past.
-- Even so, a row becomes visible only at its commit, possibly after rows with later times were read:
-- reading by updated_at needs merchant.look_back longer than the longest transaction; the change
-- order (change_order/) does not.
CREATE FUNCTION fulfillsync_touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.updated_at IS NOT DISTINCT FROM OLD.updated_at THEN
    NEW.updated_at := clock_timestamp();
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER fulfillsync_orders_touch BEFORE UPDATE ON fulfillsync_orders
  FOR EACH ROW EXECUTE FUNCTION fulfillsync_touch();
CREATE TRIGGER fulfillsync_returns_touch BEFORE UPDATE ON fulfillsync_returns
  FOR EACH ROW EXECUTE FUNCTION fulfillsync_touch();

-- A line changed touches its order or return (both of them when a line moves between two).
CREATE FUNCTION fulfillsync_touch_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'DELETE' THEN
    UPDATE fulfillsync_orders SET updated_at = clock_timestamp() WHERE reference_id = NEW.order_reference_id;
  END IF;
  IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.order_reference_id IS DISTINCT FROM NEW.order_reference_id) THEN
    UPDATE fulfillsync_orders SET updated_at = clock_timestamp() WHERE reference_id = OLD.order_reference_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER fulfillsync_order_lines_touch AFTER INSERT OR UPDATE OR DELETE ON fulfillsync_order_lines
  FOR EACH ROW EXECUTE FUNCTION fulfillsync_touch_order();

CREATE FUNCTION fulfillsync_touch_return() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'DELETE' THEN
    UPDATE fulfillsync_returns SET updated_at = clock_timestamp() WHERE reference_id = NEW.return_reference_id;
  END IF;
  IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.return_reference_id IS DISTINCT FROM NEW.return_reference_id) THEN
    UPDATE fulfillsync_returns SET updated_at = clock_timestamp() WHERE reference_id = OLD.return_reference_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER fulfillsync_return_lines_touch AFTER INSERT OR UPDATE OR DELETE ON fulfillsync_return_lines
  FOR EACH ROW EXECUTE FUNCTION fulfillsync_touch_return();

-- The catalog (schema/merchant/README.md, "Catalog"): products and their variants, pushed by the
-- push_products job. Only needed where that job is on; its change order (xid8 and NOTIFY) is in
-- catalog_change_order.sql (load it after change_order/0001_change_xid.sql).
CREATE TABLE fulfillsync_products (
  reference_id text PRIMARY KEY,        -- the merchant's key of the product (never sent)
  name         text NOT NULL,           -- 1 to 400 characters
  type         text,                    -- at most 50 characters
  taxonomy_id  bigint,                  -- a node of GET /taxonomy/{id}
  updated_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX fulfillsync_products_by_change ON fulfillsync_products (updated_at, reference_id);

CREATE TABLE fulfillsync_variants (
  sku                       text PRIMARY KEY,  -- 1 to 100 characters, unique within the merchant
  product_reference_id      text NOT NULL REFERENCES fulfillsync_products (reference_id),
  name                      text NOT NULL,     -- 1 to 400 characters
  gtin                      text,              -- at most 14 characters
  upc                       text,              -- at most 12 characters
  status                    text,              -- 'Active' or 'Inactive'
  weight                    double precision,  -- in weight_unit
  weight_unit               text,              -- oz (when NULL), lb, g, kg
  length                    double precision,  -- in dimension_unit
  width                     double precision,
  height                    double precision,
  dimension_unit            text,              -- in (when NULL), cm, mm, ft, m
  customs_country_of_origin text,              -- ISO 3166-1 alpha-2
  customs_hs_tariff_code    text,              -- at most 20 characters
  customs_description       text,              -- at most 500 characters
  customs_value             numeric,           -- whole before API version 2026-07
  customs_currency          text,              -- ISO 4217
  is_lot                    integer,           -- 0 or 1: tracked by lot
  minimum_shelf_life_days   integer,           -- 0 to 3650
  updated_at                timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX fulfillsync_variants_by_product ON fulfillsync_variants (product_reference_id, sku);

CREATE TRIGGER fulfillsync_products_touch BEFORE UPDATE ON fulfillsync_products
  FOR EACH ROW EXECUTE FUNCTION fulfillsync_touch();
CREATE TRIGGER fulfillsync_variants_touch BEFORE UPDATE ON fulfillsync_variants
  FOR EACH ROW EXECUTE FUNCTION fulfillsync_touch();
-- A variant changed touches its product (both of them when a variant moves between two).
CREATE FUNCTION fulfillsync_touch_product() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'DELETE' THEN
    UPDATE fulfillsync_products SET updated_at = clock_timestamp() WHERE reference_id = NEW.product_reference_id;
  END IF;
  IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.product_reference_id IS DISTINCT FROM NEW.product_reference_id) THEN
    UPDATE fulfillsync_products SET updated_at = clock_timestamp() WHERE reference_id = OLD.product_reference_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER fulfillsync_variants_touch_product AFTER INSERT OR UPDATE OR DELETE ON fulfillsync_variants
  FOR EACH ROW EXECUTE FUNCTION fulfillsync_touch_product();
