#pragma once
// Source rows to API create requests, with the spec's rules checked locally, so a bad row is
// rejected with a reason a person can act on instead of costing a request (or being sent at all).
// Every problem of a row is reported at once, each naming the table, line and column, e.g.
// `fulfillsync_order_lines line 2: quantity must be at least 1, found 0`. Never throws on bad data.
#include <optional>
#include <string>
#include <vector>

#include "fulfillsync/api/models/order.hpp"
#include "fulfillsync/api/models/return_order.hpp"
#include "fulfillsync/merchant/pulled_records.hpp"
#include "fulfillsync/merchant/source_rows.hpp"

namespace fulfillsync::daemon {

using merchant::OrderRow;
using merchant::ReturnRow;

template <typename Request>
struct Mapped {
  std::optional<Request> request;     // set exactly when `problems` is empty
  std::vector<std::string> problems;  // one reason per problem

  bool ok() const { return request.has_value(); }
  // The problems joined with "; " (for last_error).
  std::string reason() const;
};

// `skus`: the SKU map's rows for the SKUs the row names (merchant::PulledTables::sku_map). A return
// line may give `sku` instead of `inventory_id`: it is sent as the map's inventory id, and rejected
// when the map lacks it. An order line by `product_reference_id` that the map holds as its product's
// only variant is sent with the product's `id` too (the reference kept, the name left out).
Mapped<api::OrderCreateRequest> map_order(const OrderRow& row, const merchant::SkuMap& skus = {});
Mapped<api::ReturnCreateRequest> map_return(const ReturnRow& row, const merchant::SkuMap& skus = {});

// The SKUs a row names that the map may resolve: order lines' product_reference_id without a
// product_id, return lines' sku without an inventory_id (text values only).
std::vector<std::string> skus_named(const OrderRow& row);
std::vector<std::string> skus_named(const ReturnRow& row);

// Whether the row asks for a cancel (cancel_requested 1). A value other than 0, 1 or NULL counts as
// no cancel, and map_order reports it.
bool cancel_requested(const OrderRow& row);
// The same for the column's value alone (what the reconciliation sweep reads of an open row).
bool cancel_requested(const merchant::Field& cancel_requested_column);

}  // namespace fulfillsync::daemon
