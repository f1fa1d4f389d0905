#pragma once
// Return orders: the create request (`POST /return`), the update (`PUT /return/{id}`), and the return
// the API answers in its create, detail and list forms (one struct: the forms differ only in which
// optional members are present).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fulfillsync/api/models/parts.hpp"
#include "fulfillsync/api/models/scalars.hpp"

namespace fulfillsync::api {

struct ReturnLineRequest {
  std::int64_t id = 0;  // inventory id
  std::int64_t quantity = 0;
  std::optional<std::string> requested_action{};  // e.g. `Restock`, `Quarantine`, `Dispose`
  // Accepted by `PUT /return/{id}` from 2026-01 only; encoding them otherwise is an error.
  std::optional<std::string> lot_number{};
  std::optional<DateTime> lot_date{};
  friend bool operator==(const ReturnLineRequest&, const ReturnLineRequest&) = default;
};

struct ReturnFulfillmentCenter {
  std::int64_t id = 0;
  std::optional<std::string> name{};
  friend bool operator==(const ReturnFulfillmentCenter&, const ReturnFulfillmentCenter&) = default;
};

struct ReturnCreateRequest {
  std::string reference_id;  // 1 to 50 characters (the RMA number)
  ReturnFulfillmentCenter fulfillment_center{};
  std::vector<ReturnLineRequest> inventory{};
  std::optional<std::int32_t> original_shipment_id{};
  std::optional<std::vector<Tag>> tags{};
  std::optional<std::string> tracking_number{};
  friend bool operator==(const ReturnCreateRequest&, const ReturnCreateRequest&) = default;
};

// `PUT /return/{id}`. The spec shows only its lot additions; the rest mirrors the create request.
struct ReturnUpdateRequest : ReturnCreateRequest {
  friend bool operator==(const ReturnUpdateRequest&, const ReturnUpdateRequest&) = default;
};

struct ReturnActionRequested {
  std::optional<std::string> action{}, action_type{}, instructions{};
};

struct ReturnActionTaken {
  std::optional<std::string> action{}, action_reason{}, image_url{};
  std::optional<std::int64_t> quantity_processed{};
};

struct ReturnLotInformation {
  std::optional<std::string> number{};
  std::optional<DateTime> expiration{};
  std::optional<std::int64_t> minimum_shelf_life{};  // `minimumShelfLife`
};

struct ReturnLine {
  std::optional<std::int64_t> id{}, quantity{};
  std::optional<std::string> name{}, sku{};
  std::optional<ReturnActionRequested> action_requested{};
  std::vector<ReturnActionTaken> action_taken{};
  std::optional<ReturnLotInformation> lot_information{};
};

struct ReturnTransaction {
  std::optional<Money> amount{};
  std::optional<std::string> transaction_type{};
};

struct ReturnInvoice {
  std::optional<Money> amount{};
  std::optional<std::string> currency_code{};
};

struct ReturnStatusChange {
  std::optional<std::string> status{};
  std::optional<DateTime> timestamp{};
};

struct ReturnOrder {
  std::int64_t id = 0;
  std::optional<std::string> reference_id{};  // the RMA number; required key, null tolerated
  std::string status{};                       // `AwaitingArrival`, `Arrived`, `Processing`, `Completed`, `Cancelled`
  std::optional<IdName> channel{}, fulfillment_center{};
  std::optional<std::string> customer_name, return_type, store_order_id, tracking_number;
  std::optional<DateTime> insert_date{}, completed_date{};
  std::vector<ReturnLine> inventory{};
  std::optional<Money> invoice_amount{};   // create form
  std::optional<ReturnInvoice> invoice{};  // detail and list forms
  std::optional<std::int64_t> original_shipment_id{};
  std::vector<ReturnTransaction> transactions{};
  // Detail and list forms only.
  std::optional<DateTime> arrived_date{}, awaiting_arrival_date{}, cancelled_date{}, processing_date{};
  std::optional<std::string> shipment_tracking_number{};
  std::vector<ReturnStatusChange> status_history{};
};

// `GET /return`: a cursor page.
struct ReturnList {
  std::vector<ReturnOrder> items{};
  std::optional<std::string> first{}, last{}, next{}, prev{};
};

}  // namespace fulfillsync::api
