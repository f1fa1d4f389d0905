#pragma once
// Warehouse receiving orders (WRO, `GET /receiving/{id}`) and the set-external-sync request.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fulfillsync/api/models/scalars.hpp"

namespace fulfillsync::api {

struct ReceivingFulfillmentCenter {
  std::optional<std::int64_t> id{};
  std::optional<std::string> name{}, address1{}, address2{}, city{}, state{}, zip_code{}, country{}, email{},
      phone_number{}, timezone{};
};

struct ReceivingInventoryQuantity {
  std::optional<std::int64_t> inventory_id{}, expected_quantity{}, received_quantity{}, stowed_quantity{};
  std::optional<std::string> sku{};
};

struct ReceivingStatusChange {
  std::optional<std::int64_t> id{};
  std::optional<std::string> status{};
  std::optional<DateTime> timestamp{};
};

// From 2026-07.
struct ReceivingFreight {
  std::optional<std::string> carrier{}, bol_number{}, container_number{}, vessel_name{}, freight_forwarder{}, notes{};
};

struct ReceivingOrder {
  std::int64_t id = 0;
  std::string status{};  // `Awaiting`, `Processing`, `Completed`, ...
  std::optional<std::string> box_labels_uri{}, box_packaging_type{}, package_type{}, purchase_order_number{};
  std::optional<DateTime> expected_arrival_date{}, insert_date{}, last_updated_date{}, external_sync_timestamp{};
  std::optional<ReceivingFulfillmentCenter> fulfillment_center{};
  std::vector<ReceivingInventoryQuantity> inventory_quantities{};
  std::vector<ReceivingStatusChange> status_history{};
  std::optional<ReceivingFreight> freight{};
};

// `POST /receiving:setExternalSync`.
struct SetExternalSyncRequest {
  std::vector<std::int64_t> ids{};
  bool is_external_sync = true;
};

}  // namespace fulfillsync::api
