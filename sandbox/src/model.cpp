#include "fulfillsync/sandbox/model.hpp"

#include <array>
#include <strings.h>

namespace fulfillsync::sandbox {
namespace {

constexpr std::array<std::string_view, static_cast<std::size_t>(Scope::count)> kScopeNames = {
    "billing_read",    "channels_read",  "fulfillments_read", "fulfillments_write", "inventory_read",
    "inventory_write", "locations_read", "locations_write",   "orders_read",        "orders_write",
    "pricing_read",    "products_read",  "products_write",    "receiving_read",     "receiving_write",
    "returns_read",    "returns_write",  "webhooks_read",     "webhooks_write",     "openid",
    "offline_access"};

constexpr TaxonomyNode kTaxonomy[] = {
    {1, 0, "All Products", "/"},          {10, 1, "Apparel", "/Apparel"},
    {11, 10, "Shirts", "/Apparel/Shirts"}, {12, 10, "Bags", "/Apparel/Bags"},
    {20, 1, "Food", "/Food"},             {21, 20, "Snacks", "/Food/Snacks"},
    {30, 1, "Electronics", "/Electronics"}, {31, 30, "Batteries", "/Electronics/Batteries"},
};

constexpr std::string_view kShipOptions[] = {"Standard", "Expedited", "2-Day", "Overnight"};

}  // namespace

const TaxonomyNode* find_taxonomy(std::int64_t id) {
  for (const auto& node : kTaxonomy) {
    if (node.id == id) return &node;
  }
  return nullptr;
}

std::span<const TaxonomyNode> taxonomy_nodes() { return kTaxonomy; }

std::string_view packaging_requirement_name(int id) {
  switch (id) {
    case 1: return "Bubble Wrap";
    case 2: return "Poly Bag";
    case 3: return "Fragile Box";
    default: return "None";
  }
}

std::string_view ship_option_for(std::string_view shipping_method) {
  for (auto option : kShipOptions) {
    if (option.size() == shipping_method.size() &&
        strncasecmp(option.data(), shipping_method.data(), option.size()) == 0) {
      return option;
    }
  }
  return "Standard";
}

void describe_inventory_item(InventoryItem& item, const Variant& variant) {
  item.name = variant.name;
  item.sku = variant.sku;
  item.barcode = variant.upc.empty() ? variant.gtin : variant.upc;
  item.is_lot = variant.is_lot;
  item.is_active = variant.status == "Active";
  item.is_digital = variant.is_digital;
  item.weight_oz = variant.weight_oz;
  item.length_in = variant.length_in;
  item.width_in = variant.width_in;
  item.height_in = variant.height_in;
}

std::optional<Version> parse_version(std::string_view text) {
  if (text == "2025-07") return Version::v2025_07;
  if (text == "2026-01") return Version::v2026_01;
  if (text == "2026-07") return Version::v2026_07;
  return std::nullopt;
}

std::string_view version_name(Version version) {
  switch (version) {
    case Version::v2025_07: return "2025-07";
    case Version::v2026_01: return "2026-01";
    case Version::v2026_07: return "2026-07";
  }
  return "?";
}

std::string_view scope_name(Scope scope) { return kScopeNames[static_cast<std::size_t>(scope)]; }

std::optional<Scope> parse_scope(std::string_view name) {
  for (std::size_t i = 0; i < kScopeNames.size(); ++i) {
    if (kScopeNames[i] == name) return static_cast<Scope>(i);
  }
  return std::nullopt;
}

ScopeSet all_read_scopes() {
  ScopeSet set = 0;
  for (std::size_t i = 0; i < kScopeNames.size(); ++i) {
    if (kScopeNames[i].ends_with("_read")) set |= ScopeSet{1} << i;
  }
  return set;
}

ScopeSet all_write_scopes() {
  ScopeSet set = 0;
  for (std::size_t i = 0; i < kScopeNames.size(); ++i) {
    if (kScopeNames[i].ends_with("_write")) set |= ScopeSet{1} << i;
  }
  return set;
}

std::vector<std::string_view> scope_names(ScopeSet scopes) {
  std::vector<std::string_view> names;
  for (std::size_t i = 0; i < kScopeNames.size(); ++i) {
    if (scopes & (ScopeSet{1} << i)) names.push_back(kScopeNames[i]);
  }
  return names;
}

std::optional<ScopeSet> parse_scope_list(std::string_view text, std::string& unknown) {
  ScopeSet scopes = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find_first_of(" ,", start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view name = text.substr(start, end - start);
    start = end + 1;
    if (name.empty()) continue;
    const auto scope = parse_scope(name);
    if (!scope) {
      unknown = std::string(name);
      return std::nullopt;
    }
    scopes |= bit(*scope);
  }
  return scopes;
}

std::int64_t InventoryItem::on_hand() const {
  std::int64_t total = 0;
  for (const auto& lot : lots) total += lot.on_hand;
  return total;
}

std::string_view stage_status(Stage stage) {
  switch (stage) {
    case Stage::allocated: return "None";
    case Stage::picked:
    case Stage::packed: return "Processing";
    case Stage::labeled: return "LabeledCreated";
    case Stage::awaiting_carrier_scan:
    case Stage::in_transit:
    case Stage::out_for_delivery:
    case Stage::delivered:
    case Stage::delivery_exception: return "Completed";
    case Stage::out_of_stock: return "Exception";
    case Stage::on_hold: return "OnHold";
    case Stage::cancelled: return "Cancelled";
  }
  return "None";
}

std::optional<int> stage_detail_id(Stage stage) {
  switch (stage) {
    case Stage::picked: return 100;
    case Stage::packed: return 101;
    case Stage::labeled: return 102;
    case Stage::awaiting_carrier_scan: return 200;
    case Stage::in_transit: return 201;
    case Stage::out_for_delivery: return 202;
    case Stage::delivered: return 203;
    case Stage::delivery_exception: return 204;
    case Stage::out_of_stock: return 303;
    case Stage::on_hold: return 401;
    default: return std::nullopt;
  }
}

std::string_view stage_detail_name(Stage stage) {
  switch (stage) {
    case Stage::picked: return "Picked";
    case Stage::packed: return "Packed";
    case Stage::labeled: return "Labeled";
    case Stage::awaiting_carrier_scan: return "AwaitingCarrierScan";
    case Stage::in_transit: return "InTransit";
    case Stage::out_for_delivery: return "OutForDelivery";
    case Stage::delivered: return "Delivered";
    case Stage::delivery_exception: return "DeliveryException";
    case Stage::out_of_stock: return "OutOfStock";
    case Stage::on_hold: return "InvalidAddress";
    default: return "";
  }
}

bool stage_shipped(Stage stage) {
  return stage == Stage::awaiting_carrier_scan || stage == Stage::in_transit || stage == Stage::out_for_delivery ||
         stage == Stage::delivered || stage == Stage::delivery_exception;
}

std::string tracking_number(const Shipment& shipment) {
  const std::string digits = std::to_string(shipment.id);
  return "9400" + std::string(digits.size() < 18 ? 18 - digits.size() : 0, '0') + digits;
}

std::string_view order_status_name(OrderStatus status) {
  switch (status) {
    case OrderStatus::processing: return "Processing";
    case OrderStatus::exception: return "Exception";
    case OrderStatus::partially_fulfilled: return "PartiallyFulfilled";
    case OrderStatus::fulfilled: return "Fulfilled";
    case OrderStatus::cancelled: return "Cancelled";
    case OrderStatus::import_review: return "ImportReview";
  }
  return "Processing";
}

std::string_view return_status_name(ReturnStatus status) {
  switch (status) {
    case ReturnStatus::awaiting_arrival: return "AwaitingArrival";
    case ReturnStatus::arrived: return "Arrived";
    case ReturnStatus::processing: return "Processing";
    case ReturnStatus::completed: return "Completed";
    case ReturnStatus::cancelled: return "Cancelled";
  }
  return "AwaitingArrival";
}

std::string_view wro_status_name(WroStatus status) {
  switch (status) {
    case WroStatus::awaiting: return "Awaiting";
    case WroStatus::processing: return "Processing";
    case WroStatus::completed: return "Completed";
    case WroStatus::cancelled: return "Cancelled";
    case WroStatus::incomplete: return "Incomplete";
    case WroStatus::arrived: return "Arrived";
    case WroStatus::partially_arrived: return "PartiallyArrived";
    case WroStatus::partially_arrived_at_hub: return "PartiallyArrivedAtHub";
    case WroStatus::arrived_at_hub: return "ArrivedAtHub";
    case WroStatus::processing_at_hub: return "ProcessingAtHub";
    case WroStatus::internal_transfer: return "InternalTransfer";
  }
  return "Awaiting";
}

}  // namespace fulfillsync::sandbox
