-- The quick start's sample rows: the catalog, orders, cancels and returns, and a few rows that are
-- wrong on purpose so the demo shows them rejected with their reasons. Loaded after
-- schema/merchant/source_tables.sql, which creates the contract's source tables the way a shop
-- application would. Products, inventory ids and fulfillment centers are those of
-- `fulfillsync-sandbox --seed demo`.

-- WAL lets the merchant application and fulfillsyncd read and write side by side.
PRAGMA journal_mode = WAL;

BEGIN;

-- Sixteen ordinary orders, DEMO-1001 to DEMO-1016, each with one to three lines.
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 16),
customer(slot, name, email, address1, city, state, zip, country) AS (VALUES
  (0, 'Ada Lovelace', 'ada@example.com', '12 St James''s Square', 'London', NULL, 'SW1Y 4JH', 'GB'),
  (1, 'Grace Hopper', 'grace@example.com', '1 Navy Yard', 'Arlington', 'VA', '22202', 'US'),
  (2, 'Alan Turing', 'alan@example.com', '78 High Street', 'Wilmslow', NULL, 'SK9 1AA', 'GB'),
  (3, 'Katherine Johnson', 'katherine@example.com', '300 E Street SW', 'Washington', 'DC', '20546', 'US'))
INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, type, sales_channel, purchase_date,
                                total_price, recipient_name, recipient_email, recipient_phone, address1, city, state,
                                zip_code, country, gift_message, tags)
SELECT printf('DEMO-%d', 1000 + i), printf('#%d', 1000 + i), CASE WHEN i % 4 = 0 THEN 'Express' ELSE 'Standard' END,
       'DTC', 'Shopify', strftime('%Y-%m-%dT%H:%M:%fZ', 'now', printf('-%d hours', 17 - i)),
       printf('%d.%02d', 10 + i * 7, (i * 37) % 100), c.name, c.email, printf('555-01%02d', i), c.address1, c.city,
       c.state, c.zip, c.country, CASE WHEN i = 3 THEN 'Happy birthday!' END,
       CASE WHEN i % 5 = 0 THEN '{"campaign": "spring-sale"}' END
FROM n JOIN customer c ON c.slot = n.i % 4;

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 16),
line(k) AS (VALUES (1), (2), (3)),
product(slot, ref, name) AS (VALUES
  (0, 'TSHIRT-M', 'Organic Cotton T-Shirt M'), (1, 'TOTE-CANVAS', 'Canvas Tote Bag'),
  (2, 'SNACK-TRAIL', 'Trail Mix 200g'), (3, 'BATT-AA4', 'AA Battery 4-pack'))
INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_reference_id, product_name, quantity,
                                     external_line_id)
SELECT printf('DEMO-%d', 1000 + i), k, p.ref, p.name, 1 + (i + k) % 3, (1000 + i) * 10 + k
FROM n JOIN line ON k <= 1 + i % 3 JOIN product p ON p.slot = (i + k) % 4;
-- A mug new to the catalog: push_products creates it at the provider before this order names it.
INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_reference_id, product_name, quantity,
                                     external_line_id)
VALUES ('DEMO-1016', 3, 'MUG-ENAMEL-WHITE', 'Enamel Camp Mug, white', 2, 10163);

-- A B2B order naming its product by the provider's product id.
INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, type, sales_channel, total_price,
                                recipient_name, address1, address2, city, state, zip_code, country, company_name)
VALUES ('DEMO-2001', 'PO-77812', 'Freight', 'B2B', 'Wholesale', '1249.00', 'Receiving Dock', '400 Commerce Way',
        'Dock 4', 'Columbus', 'OH', '43215', 'US', 'Corner Shop Ltd');
INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_id, quantity, unit_of_measure)
VALUES ('DEMO-2001', 1, 3002, 24, 'EA');

-- Two orders the customer cancelled before they were sent: fulfillsyncd never creates them.
INSERT INTO fulfillsync_orders (reference_id, shipping_method, type, recipient_name, address1, city, state, zip_code,
                                country, total_price, cancel_requested)
VALUES ('DEMO-3001', 'Standard', 'DTC', 'Edsger Dijkstra', '1 University Station', 'Austin', 'TX', '78712', 'US',
        '19.90', 1),
       ('DEMO-3002', 'Standard', 'DTC', 'Barbara Liskov', '32 Vassar St', 'Cambridge', 'MA', '02139', 'US', '8.50', 1);
INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_reference_id, product_name, quantity)
VALUES ('DEMO-3001', 1, 'TSHIRT-L', 'Organic Cotton T-Shirt L', 1),
       ('DEMO-3002', 1, 'BATT-AA4', 'AA Battery 4-pack', 2);

-- Wrong on purpose: no recipient name; a line of quantity 0; a reference longer than 300 characters.
INSERT INTO fulfillsync_orders (reference_id, shipping_method, type, recipient_name, address1, city, state, zip_code,
                                country)
VALUES ('DEMO-9001', 'Standard', 'DTC', NULL, '5 Main St', 'Springfield', 'IL', '62701', 'US'),
       ('DEMO-9002', 'Standard', 'DTC', 'Donald Knuth', '353 Serra Mall', 'Stanford', 'CA', '94305', 'US'),
       ('DEMO-9003-' || hex(zeroblob(150)), 'Standard', 'DTC', 'Frances Allen', '1101 Kitchawan Rd',
        'Yorktown Heights', 'NY', '10598', 'US');
INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_reference_id, product_name, quantity)
VALUES ('DEMO-9001', 1, 'TOTE-CANVAS', 'Canvas Tote Bag', 1),
       ('DEMO-9002', 1, 'TSHIRT-S', 'Organic Cotton T-Shirt S', 2),
       ('DEMO-9002', 2, 'SNACK-TRAIL', 'Trail Mix 200g', 0),
       ('DEMO-9003-' || hex(zeroblob(150)), 1, 'TOTE-CANVAS', 'Canvas Tote Bag', 1);

-- Returns: two good ones and one without a fulfillment center.
INSERT INTO fulfillsync_returns (reference_id, fulfillment_center_id, fulfillment_center_name, tracking_number, tags)
VALUES ('RMA-5001', 8, 'Cicero (IL)', '1Z999AA10123456784', '{"reason": "wrong size"}'),
       ('RMA-5002', 11, 'Moreno Valley (CA)', NULL, NULL),
       ('RMA-5003', NULL, NULL, NULL, NULL);
INSERT INTO fulfillsync_return_lines (return_reference_id, line_number, inventory_id, quantity, requested_action)
VALUES ('RMA-5001', 1, 7002, 1, 'Restock'),
       ('RMA-5002', 1, 7005, 2, 'Quarantine'),
       ('RMA-5002', 2, 7006, 1, 'Dispose'),
       ('RMA-5003', 1, 7004, 1, 'Restock');

INSERT INTO fulfillsync_watched_inventory (inventory_id) VALUES (7001), (7002), (7003), (7005);

-- The catalog (push_products): the products and SKUs the orders above name. The sandbox's demo seed
-- has the first four already, as a shop that kept its catalog at the provider by hand would: each is
-- adopted by SKU and brought to the merchant's version. The mug is new and is created.
INSERT INTO fulfillsync_products (reference_id, name, type, taxonomy_id)
VALUES ('TSHIRT-ORGANIC', 'Organic Cotton T-Shirt', 'Apparel', 11),
       ('TOTE-CANVAS', 'Canvas Tote Bag', 'Accessories', 12),
       ('SNACK-TRAIL', 'Trail Mix 200g', 'Food', 21),
       ('BATT-AA4', 'AA Battery 4-pack', 'Electronics', 31),
       ('MUG-ENAMEL', 'Enamel Camp Mug', 'Kitchen', NULL);
INSERT INTO fulfillsync_variants (sku, product_reference_id, name, status, weight, weight_unit,
                                  customs_country_of_origin, customs_hs_tariff_code, customs_value, customs_currency,
                                  is_lot, minimum_shelf_life_days)
VALUES ('TSHIRT-S', 'TSHIRT-ORGANIC', 'Organic Cotton T-Shirt S', 'Active', 6, 'oz', 'PT', '6109.10', '12.50', 'USD', 0,
        NULL),
       ('TSHIRT-M', 'TSHIRT-ORGANIC', 'Organic Cotton T-Shirt M', 'Active', 7, 'oz', 'PT', '6109.10', '12.50', 'USD', 0,
        NULL),
       ('TSHIRT-L', 'TSHIRT-ORGANIC', 'Organic Cotton T-Shirt L', 'Active', 8, 'oz', 'PT', '6109.10', '12.50', 'USD', 0,
        NULL),
       ('TOTE-CANVAS', 'TOTE-CANVAS', 'Canvas Tote Bag', 'Active', 10, 'oz', 'IN', '4202.22', '9', 'USD', 0, NULL),
       ('SNACK-TRAIL', 'SNACK-TRAIL', 'Trail Mix 200g', 'Active', 200, 'g', 'US', '2008.19', '4', 'USD', 1, 60),
       ('BATT-AA4', 'BATT-AA4', 'AA Battery 4-pack', 'Active', 3.5, 'oz', 'CN', '8506.10', '5', 'USD', 0, NULL),
       ('MUG-ENAMEL-WHITE', 'MUG-ENAMEL', 'Enamel Camp Mug, white', 'Active', 9, 'oz', 'PL', '7323.94', '14', 'USD', 0,
        NULL),
       ('MUG-ENAMEL-GREEN', 'MUG-ENAMEL', 'Enamel Camp Mug, green', 'Active', 9, 'oz', 'PL', '7323.94', '14', 'USD', 0,
        NULL);

COMMIT;
