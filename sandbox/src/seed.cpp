// The `--seed demo` catalogue for the default merchant.
#include "fulfillsync/sandbox/store.hpp"

namespace fulfillsync::sandbox {
namespace {

using namespace std::chrono_literals;

struct DemoVariant {
  std::string_view sku, name;
  double weight_oz;
  bool is_lot;
};

struct DemoProduct {
  std::string_view name;
  int taxonomy_id;
  std::vector<DemoVariant> variants;
};

}  // namespace

void seed_demo(Store& store, TimePoint now) {
  Merchant& merchant = store.merchant(kDefaultMerchantId);
  store.add_channel(merchant.id, "Demo Shop (Shopify)", "Shopify", all_read_scopes() | all_write_scopes());
  store.add_channel(merchant.id, "Marketplace Feed", "Marketplace", all_read_scopes());

  const std::vector<DemoProduct> products = {
      {"Organic Cotton T-Shirt", 11, {{"TSHIRT-S", "Organic Cotton T-Shirt S", 6, false},
                                      {"TSHIRT-M", "Organic Cotton T-Shirt M", 7, false},
                                      {"TSHIRT-L", "Organic Cotton T-Shirt L", 8, false}}},
      {"Canvas Tote Bag", 12, {{"TOTE-CANVAS", "Canvas Tote Bag", 10, false}}},
      {"Trail Mix 200g", 21, {{"SNACK-TRAIL", "Trail Mix 200g", 7.5, true}}},
      {"AA Battery 4-pack", 31, {{"BATT-AA4", "AA Battery 4-pack", 3.5, false}}},
  };
  const int centers[] = {8, 11, 17};
  int pattern = 0;
  for (const auto& demo : products) {
    Product product;
    product.merchant_id = merchant.id;
    product.name = std::string(demo.name);
    product.taxonomy_id = demo.taxonomy_id;
    product.created_on = now - 24h * 90;
    if (demo.variants.size() == 1) product.reference_id = std::string(demo.variants.front().sku);
    for (const auto& v : demo.variants) {
      Variant variant;
      variant.name = std::string(v.name);
      variant.sku = std::string(v.sku);
      variant.upc = "0" + std::to_string(80000000000LL + static_cast<long long>(v.sku.size()) * 1000 + pattern);
      variant.weight_oz = v.weight_oz;
      variant.is_lot = v.is_lot;
      variant.minimum_shelf_life_days = v.is_lot ? 60 : 0;
      variant.customs_value = 12;
      variant.customs_description = std::string(v.name);
      variant.customs_hs_tariff_code = "6109.10";
      product.variants.push_back(std::move(variant));
    }
    Product& added = store.add_product(std::move(product));
    for (const auto& variant : added.variants) {
      InventoryItem& item = store.inventory.at(variant.inventory_id);
      for (int center : centers) {
        ++pattern;
        const int quantity = 40 + (pattern * 37) % 160;
        if (variant.is_lot) {
          for (int batch = 1; batch <= 2; ++batch) {
            LotLevel lot;
            lot.location_id = center;
            lot.lot_number = "L2026-0" + std::to_string(batch);
            lot.lot_date = now + 24h * (120 * batch);
            lot.on_hand = quantity / batch;
            item.lots.push_back(lot);
            store.record_inventory_event(merchant.id, item.id, "Receiving", lot.on_hand, center, lot.lot_number,
                                         now - 24h * 30, "demo seed");
          }
        } else {
          LotLevel lot;
          lot.location_id = center;
          lot.on_hand = quantity;
          item.lots.push_back(lot);
          store.record_inventory_event(merchant.id, item.id, "Receiving", quantity, center, "", now - 24h * 30,
                                       "demo seed");
        }
      }
    }
  }

  // An inbound shipment on its way and one already stowed.
  const Id first_inventory = store.products.at(merchant.product_ids.front()).variants.front().inventory_id;
  for (int i = 0; i < 2; ++i) {
    ReceivingOrder wro;
    wro.id = store.next.receiving++;
    wro.merchant_id = merchant.id;
    wro.fulfillment_center_id = 8;
    wro.purchase_order_number = "PO-DEMO-" + std::to_string(i + 1);
    wro.insert_date = now - 24h * (i == 0 ? 1 : 20);
    wro.expected_arrival_date = i == 0 ? now + 48h : now - 24h * 15;
    wro.last_updated_date = wro.insert_date;
    wro.history.emplace_back(WroStatus::awaiting, wro.insert_date);
    WroLine line;
    line.inventory_id = first_inventory;
    line.sku = store.inventory.at(first_inventory).sku;
    line.expected = 100;
    if (i == 1) {
      wro.status = WroStatus::completed;
      line.received = line.stowed = 100;
      wro.history.emplace_back(WroStatus::arrived, wro.expected_arrival_date);
      wro.history.emplace_back(WroStatus::completed, wro.expected_arrival_date + 8h);
      wro.last_updated_date = wro.expected_arrival_date + 8h;
    }
    wro.lines.push_back(line);
    WroBox box;
    box.tracking_number = "1Z999AA1012345678" + std::to_string(i);
    box.line_indexes = {0};
    wro.boxes.push_back(box);
    merchant.receiving_ids.push_back(wro.id);
    store.receiving_orders.emplace(wro.id, std::move(wro));
  }

  for (int i = 0; i < 2; ++i) {
    UnidentifiedReceivingOrder uro;
    uro.id = store.next.unidentified_receiving++;
    uro.merchant_id = merchant.id;
    uro.fulfillment_center_id = i == 0 ? 8 : 11;
    uro.arrived_date = now - 24h * (3 + i);
    uro.tracking_number = "URO-TRACK-" + std::to_string(uro.id);
    uro.notes = "Box arrived without a receiving order; label reads 'demo shop'.";
    uro.attachment_names = {"label.jpg", "contents.jpg"};
    merchant.unidentified_receiving_ids.push_back(uro.id);
    store.unidentified_receiving_orders.emplace(uro.id, std::move(uro));
  }
}

}  // namespace fulfillsync::sandbox
