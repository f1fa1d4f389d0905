-- Schema version 2 in PostgreSQL (schema/merchant/results/0002_pulled.sql with PostgreSQL's types):
-- what the pull jobs bring back from the provider. Shipments with their items and
-- tracking, inventory lots and shipment timelines, and the provider's progress of orders and returns.
-- Every table here is written only by the daemon, except `{prefix}tracking.acknowledged_at`, which the
-- merchant's application sets. Rows never go backwards: a shipment is rewritten only by a record with
-- the same or a later last_update_at, a status only by one with the same or a later remote_updated_at.

-- When the provider last changed remote_status, as pulled (the order's latest shipment update). NULL
-- until the first pull; from then on the pull, not the create or cancel answer, owns remote_status.
ALTER TABLE "{prefix}order_sync" ADD COLUMN remote_updated_at text;

ALTER TABLE "{prefix}return_sync" ADD COLUMN remote_updated_at text;  -- as for orders
ALTER TABLE "{prefix}return_sync" ADD COLUMN arrived_at text;         -- when the goods arrived
ALTER TABLE "{prefix}return_sync" ADD COLUMN processing_at text;      -- when the provider began processing them
ALTER TABLE "{prefix}return_sync" ADD COLUMN completed_at text;
ALTER TABLE "{prefix}return_sync" ADD COLUMN cancelled_at text;
-- [{"status": "Arrived", "timestamp": "..."}, ...] in the provider's order
ALTER TABLE "{prefix}return_sync" ADD COLUMN status_history text;
-- [{"inventory_id": 7002, "sku": "...", "action": "Restock", ...}, ...]: what was done with each item
ALTER TABLE "{prefix}return_sync" ADD COLUMN actions_taken text;

CREATE TABLE "{prefix}shipments" (
  shipment_id                bigint PRIMARY KEY,  -- the provider's shipment id
  order_id                   bigint NOT NULL,     -- the provider's order id ({prefix}order_sync.remote_id)
  order_reference_id         text,                 -- the order's reference_id (fulfillsync_orders)
  status                     text NOT NULL,        -- None, Processing, Completed, Exception, OnHold, Cancelled, ...
  status_detail_id           bigint,              -- the latest status detail, e.g. 201
  status_detail_name         text,                 -- e.g. InTransit
  location_id                bigint,              -- the fulfillment center shipping it
  location_name              text,
  ship_option                text,                 -- the ship option the provider chose
  created_date               text,
  actual_fulfillment_date    text,
  estimated_fulfillment_date text,
  delivery_date              text,
  last_update_at             text NOT NULL,        -- the provider's; an older record never overwrites a newer one
  invoice_amount             text,                 -- exact decimal text, e.g. 12.30
  invoice_currency_code      text,                 -- e.g. USD
  is_tracking_uploaded       boolean NOT NULL,     -- true once the provider says tracking was uploaded
  synced_at                  text NOT NULL         -- when the daemon last wrote the row
);
CREATE INDEX "{prefix}shipments_by_order" ON "{prefix}shipments" (order_reference_id);

-- The inventory items of a shipment, replaced whenever the shipment row is written.
CREATE TABLE "{prefix}shipment_items" (
  shipment_id          bigint NOT NULL,  -- {prefix}shipments.shipment_id
  line_number          bigint NOT NULL,  -- order within the shipment, from 1
  product_id           bigint,           -- the provider's product id
  product_reference_id text,              -- the product's own reference (its SKU)
  sku                  text,
  product_name         text,
  inventory_id         bigint,           -- the provider's inventory id
  lot                  text,              -- the lot shipped, if the item has lots
  expiration_date      text,              -- of that lot
  quantity             bigint,
  quantity_committed   bigint,
  serial_numbers       text NOT NULL,     -- JSON array of text, [] when none
  PRIMARY KEY (shipment_id, line_number)
);

-- One row per shipment with tracking. The daemon writes every column but acknowledged_at.
CREATE TABLE "{prefix}tracking" (
  shipment_id             bigint PRIMARY KEY,  -- {prefix}shipments.shipment_id
  order_id                bigint NOT NULL,     -- the provider's order id
  order_reference_id      text,                 -- the order's reference_id
  tracking_number         text NOT NULL,
  carrier                 text,
  carrier_service         text,
  tracking_url            text,
  scac                    text,                 -- the carrier's standard alpha code (freight)
  bol                     text,                 -- bill of lading (freight)
  pro_number              text,                 -- the carrier's PRO number (freight)
  shipping_date           text,
  last_tracking_update_at text,
  written_at              text NOT NULL,        -- when the daemon wrote this tracking number
  -- Set by the merchant's application: "I have this tracking". With tracking mark mode
  -- `acknowledged`, only acknowledged rows are marked uploaded. A new tracking number clears it.
  acknowledged_at         text,
  upload_marked_at        text,                 -- when the daemon told the provider the tracking is uploaded
  mark_attempts           bigint NOT NULL DEFAULT 0,
  mark_error              text                  -- why the last attempt to mark it failed; NULL once marked
);
-- What is left to mark: small however many shipments the table holds.
CREATE INDEX "{prefix}tracking_to_mark" ON "{prefix}tracking" (shipment_id) WHERE upload_marked_at IS NULL;

-- The lot levels of the watched inventory ids (fulfillsync_watched_inventory): exactly what the
-- provider listed at the last pull; lots it no longer lists are removed, as are ids no longer watched.
CREATE TABLE "{prefix}inventory_lots" (
  inventory_id               bigint NOT NULL,  -- the provider's inventory id
  lot_number                 text NOT NULL,     -- '' for stock without lots
  location_id                bigint NOT NULL,  -- the fulfillment center holding it
  location_name              text,
  lot_date                   text,              -- the lot's date, as the provider lists it
  awaiting_quantity          bigint NOT NULL,  -- on its way in
  committed_quantity         bigint NOT NULL,  -- reserved for orders
  fulfillable_quantity       bigint NOT NULL,  -- available to new orders
  internal_transfer_quantity bigint NOT NULL,  -- moving between fulfillment centers
  on_hand_quantity           bigint NOT NULL,  -- physically there
  synced_at                  text NOT NULL,     -- when the daemon last pulled these figures
  PRIMARY KEY (inventory_id, lot_number, location_id)
);

-- The provider's log of what happened to a shipment, replaced whole at every pull of it.
CREATE TABLE "{prefix}shipment_timeline" (
  shipment_id   bigint NOT NULL,  -- {prefix}shipments.shipment_id
  seq           bigint NOT NULL,  -- from 1, in the provider's order
  timestamp     text NOT NULL,
  log_type_id   bigint,
  log_type_name text,              -- e.g. InTransit
  log_type_text text,              -- the provider's description of the event
  metadata      text NOT NULL,     -- JSON object, {} when none
  PRIMARY KEY (shipment_id, seq)
);
