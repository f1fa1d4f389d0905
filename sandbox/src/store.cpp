#include "fulfillsync/sandbox/store.hpp"

namespace fulfillsync::sandbox {

Store::Store() {
  // The provider's fulfillment centers exist for every account.
  fulfillment_centers_ = {
      {8, "Cicero (IL)", "5900 W Ogden Ave", "", "Cicero", "IL", "60804", "US", "cicero@sandbox.test", "555-0108",
       "Central Standard Time"},
      {11, "Moreno Valley (CA)", "14000 Perris Blvd", "", "Moreno Valley", "CA", "92553", "US",
       "moreno@sandbox.test", "555-0111", "Pacific Standard Time"},
      {17, "Bethlehem (PA)", "2001 Commerce Center Blvd", "", "Bethlehem", "PA", "18015", "US",
       "bethlehem@sandbox.test", "555-0117", "Eastern Standard Time"},
  };
  merchant(kDefaultMerchantId);
}

Merchant& Store::merchant(int id) {
  auto found = merchants_.find(id);
  if (found != merchants_.end()) return found->second;
  Merchant& created = merchants_[id];
  created.id = id;
  created.name = "Sandbox Merchant " + std::to_string(id);
  created.default_channel_id = add_channel(id, "Default", "Default", all_read_scopes()).id;
  created.pat_channel_id =
      add_channel(id, "Personal Access Token", "SMA", all_read_scopes() | all_write_scopes()).id;
  return created;
}

Merchant* Store::find_merchant(int id) {
  auto found = merchants_.find(id);
  return found == merchants_.end() ? nullptr : &found->second;
}

Channel& Store::add_channel(int merchant_id, std::string name, std::string application_name, ScopeSet scopes) {
  Channel channel;
  channel.id = next.channel++;
  channel.merchant_id = merchant_id;
  channel.name = std::move(name);
  channel.application_name = std::move(application_name);
  channel.scopes = scopes;
  channels_.push_back(std::move(channel));
  // merchant() calls this while creating the merchant, before the map entry is complete.
  merchants_[merchant_id].channel_ids.push_back(channels_.back().id);
  return channels_.back();
}

Channel* Store::find_channel(int id) {
  if (id < 1 || static_cast<std::size_t>(id) > channels_.size()) return nullptr;
  return &channels_[static_cast<std::size_t>(id - 1)];
}

const FulfillmentCenter* Store::find_fulfillment_center(int id) const {
  for (const auto& center : fulfillment_centers_) {
    if (center.id == id) return &center;
  }
  return nullptr;
}

Order& Store::add_order(Order order) {
  order.id = next.order++;
  for (auto& shipment : order.shipments) {
    shipment.id = next.shipment++;
    shipment.order_id = order.id;
    order_of_shipment_.emplace(shipment.id, order.id);
  }
  Merchant& owner = merchant(order.merchant_id);
  owner.order_ids.push_back(order.id);
  owner.order_by_reference.emplace(order.reference_id, order.id);
  orders_.push_back(std::move(order));
  return orders_.back();
}

Order* Store::find_order(Id id) {
  if (id < kFirstOrderId || id - kFirstOrderId >= static_cast<Id>(orders_.size())) return nullptr;
  return &orders_[static_cast<std::size_t>(id - kFirstOrderId)];
}

Shipment* Store::find_shipment(Id id, Order** owner) {
  const auto found = order_of_shipment_.find(id);
  if (found == order_of_shipment_.end()) return nullptr;
  Order* order = find_order(found->second);
  if (order == nullptr) return nullptr;
  for (auto& shipment : order->shipments) {
    if (shipment.id == id) {
      if (owner != nullptr) *owner = order;
      return &shipment;
    }
  }
  return nullptr;
}

Variant* Store::find_variant(Id id, Product** owner) {
  const auto found = product_of_variant.find(id);
  if (found == product_of_variant.end()) return nullptr;
  auto product = products.find(found->second);
  if (product == products.end()) return nullptr;
  for (auto& variant : product->second.variants) {
    if (variant.id == id) {
      if (owner != nullptr) *owner = &product->second;
      return &variant;
    }
  }
  return nullptr;
}

Product& Store::add_product(Product product) {
  product.id = next.product++;
  Merchant& owner = merchant(product.merchant_id);
  for (auto& variant : product.variants) {
    variant.id = next.variant++;
    variant.product_id = product.id;
    variant.created_on = product.created_on;
    variant.updated_on = product.created_on;
    InventoryItem item;
    item.id = next.inventory++;
    item.merchant_id = product.merchant_id;
    describe_inventory_item(item, variant);
    variant.inventory_id = item.id;
    for (auto& metadata : variant.channel_metadata) metadata.id = next.channel_metadata++;
    inventory.emplace(item.id, std::move(item));
    product_of_variant.emplace(variant.id, product.id);
    if (!variant.sku.empty()) owner.variant_by_sku.emplace(variant.sku, variant.id);
  }
  owner.product_ids.push_back(product.id);
  if (!product.reference_id.empty()) owner.product_by_reference.emplace(product.reference_id, product.id);
  const Id id = product.id;
  return products.emplace(id, std::move(product)).first->second;
}

void Store::record_inventory_event(int merchant_id, Id inventory_id, std::string type, int change, int location_id,
                                   std::string lot, TimePoint at, std::string reference) {
  InventoryEvent event;
  event.id = next.inventory_event++;
  event.merchant_id = merchant_id;
  event.inventory_id = inventory_id;
  event.event_type = std::move(type);
  event.quantity_change = change;
  event.location_id = location_id;
  event.lot_number = std::move(lot);
  event.at = at;
  event.reference = std::move(reference);
  inventory_events.push_back(std::move(event));
}

}  // namespace fulfillsync::sandbox
