#pragma once
// Inventory as the daemon reads it: lot levels per location (`GET /inventory-level/{id}/lots`), the
// inventory item (`GET /inventory/{id}`), a variant's customs data (whose `value` is an integer
// before 2026-07 and a decimal from it; kept as exact text either way), and the product list
// (`GET /product`, a cursor page) with each variant's inventory id and stock.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fulfillsync/api/models/scalars.hpp"

namespace fulfillsync::api {

struct LotQuantities {
  std::optional<std::int64_t> awaiting_quantity{}, committed_quantity{}, fulfillable_quantity{};
  std::optional<std::int64_t> internal_transfer_quantity{}, on_hand_quantity{};
};

struct LotLocation {
  std::optional<std::int64_t> location_id{};
  std::optional<std::string> name{};
  LotQuantities quantities{};  // beside `location_id` in the JSON
};

struct Lot {
  std::optional<std::string> lot_number{};
  std::optional<DateTime> lot_date{};
  LotQuantities quantities{};  // beside `lot_number` in the JSON
  std::vector<LotLocation> locations{};
};

struct LotLevels {
  std::int64_t inventory_id = 0;
  std::optional<std::string> name{}, sku{};
  std::vector<Lot> lots{};
};

struct InventoryDimensions {
  std::optional<double> height{}, length{}, width{};
  std::optional<bool> is_locked{}, validated{};
  std::optional<std::string> unit{};
};

struct InventoryVariantFlags {
  std::optional<bool> is_hazmat{}, hazmat_validated{};  // `hazmat.is_hazmat`, `hazmat.validated`
  std::optional<bool> is_active{}, is_bundle{}, is_digital{};
};

struct InventoryWeight {
  std::optional<std::string> unit{};
  std::optional<double> value{};
};

struct InventoryItem {
  std::int64_t inventory_id = 0;
  std::optional<std::int64_t> user_id{};
  std::optional<std::string> name{}, sku{}, barcode{};
  std::optional<bool> is_case{}, is_lot{};
  std::optional<InventoryDimensions> dimensions{};
  std::optional<InventoryVariantFlags> variant{};
  std::optional<InventoryWeight> weight{};
};

struct VariantCustoms {
  std::optional<std::string> country_code_of_origin{}, currency{}, description{}, hs_tariff_code{};
  std::optional<bool> is321_eligible{};
  std::optional<Money> value{};  // integer before 2026-07, decimal from it
};

// A variant's `inventory`: the inventory item it is stocked as and how many are on hand.
struct VariantInventory {
  std::optional<std::int64_t> inventory_id{}, on_hand_qty{};
};

// The parts of a product variant the daemon reads (`GET /product/{id}/variants` answers an array).
struct Variant {
  std::int64_t id = 0;
  std::optional<std::string> name{}, sku{}, gtin{}, upc{}, status{};
  std::optional<VariantCustoms> customs{};
  std::optional<VariantInventory> inventory{};
  std::optional<DateTime> updated_on{};
};
using VariantList = std::vector<Variant>;

// The parts of a product the daemon reads (`POST /product` answers one; `GET /product` lists them).
struct Product {
  std::int64_t id = 0;
  std::optional<std::string> name{}, type{};
  VariantList variants{};  // `null` reads as none
};

// `GET /product`: a page of products and the links to its neighbours.
struct ProductList {
  std::vector<Product> items{};
  std::optional<std::string> next{}, prev{};  // page URLs
};

}  // namespace fulfillsync::api
