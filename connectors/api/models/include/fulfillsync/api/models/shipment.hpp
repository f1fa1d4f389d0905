#pragma once
// Shipments as orders carry them (`GET /order`, `POST /order`, cancel), their timeline, and the batch
// tracking-upload update. Fields the daemon relies on are plain members and required when decoding;
// the rest are optional (absent or null).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fulfillsync/api/models/parts.hpp"
#include "fulfillsync/api/models/scalars.hpp"

namespace fulfillsync::api {

struct Measurements {
  std::optional<double> depth_in{}, length_in{}, total_weight_oz{}, width_in{};
  friend bool operator==(const Measurements&, const Measurements&) = default;
};

// One inventory item picked for a shipment product, with its lot and serial numbers.
struct ShipmentInventoryItem {
  std::optional<std::int64_t> id{};
  std::optional<std::string> name{}, lot{};
  std::optional<DateTime> expiration_date{};
  std::optional<bool> is_dangerous_goods{};
  std::optional<std::int64_t> quantity{}, quantity_committed{};
  std::vector<std::string> serial_numbers{};
};

struct ShipmentProduct {
  std::optional<std::int64_t> id{};
  std::optional<std::string> name{}, reference_id{}, sku{};
  std::vector<ShipmentInventoryItem> inventory_items{};
};

struct CartonDetail {
  std::vector<ShipmentProduct> products{};
};

struct Carton {
  std::optional<std::int64_t> id{};
  std::optional<std::string> barcode{}, type{};
  std::optional<Measurements> measurements{};
  std::vector<CartonDetail> carton_details{};
};

struct ParentCarton {
  std::optional<std::string> barcode{}, type{};
  std::optional<Measurements> measurements{};
  std::vector<Carton> cartons{};
};

struct ShipmentStatusDetail {
  std::optional<std::int64_t> id;  // e.g. 201 (InTransit), 303 (OutOfStock)
  std::optional<std::string> name{}, description{};
  std::optional<std::int64_t> exception_fulfillment_center_id{}, inventory_id{};
  std::vector<std::string> validation_messages{};  // from `extra_information.validation_messages`
};

struct Tracking {
  std::optional<std::string> tracking_number{}, tracking_url{}, carrier{}, carrier_service{};
  std::optional<std::string> bol{}, pro_number{}, scac{};
  std::optional<DateTime> shipping_date{};
};

struct Shipment {
  std::int64_t id = 0;
  std::string status;         // `None`, `Processing`, `Completed`, ... (kept as text: the set is open)
  DateTime last_update_at{};  // the incremental pull's watermark
  std::optional<std::int64_t> order_id{};
  std::optional<std::string> reference_id{};
  std::optional<std::string> store_order_id{};  // versions before 2026-01 only
  std::optional<DateTime> created_date{}, actual_fulfillment_date{}, estimated_fulfillment_date{}, delivery_date{};
  std::optional<DateTime> last_tracking_update_at{};
  std::optional<std::string> estimated_fulfillment_date_status{}, gift_message{};
  std::optional<Money> insurance_value{}, invoice_amount{};
  std::optional<std::string> invoice_currency_code{};
  std::optional<bool> is_tracking_uploaded{}, require_signature{};
  std::optional<IdName> location{};
  std::optional<Measurements> measurements{};
  std::optional<std::string> package_material_type{}, ship_option{};
  std::vector<ParentCarton> parent_cartons{};
  std::vector<ShipmentProduct> products{};
  std::optional<Recipient> recipient{};
  std::vector<ShipmentStatusDetail> status_details{};
  std::optional<Tracking> tracking{};
};

// `GET /order/{orderId}/shipment/{shipmentId}/timeline` answers an array of these.
struct TimelineEntry {
  DateTime timestamp{};
  std::optional<std::int64_t> log_type_id{};
  std::optional<std::string> log_type_name{}, log_type_text{};
  std::vector<std::pair<std::string, std::string>> metadata{};  // in body order
};
using ShipmentTimeline = std::vector<TimelineEntry>;

// `POST /shipment:batchUpdateTrackingUpload`.
struct TrackingUploadRequest {
  bool is_tracking_uploaded = true;
  std::vector<std::int64_t> shipment_ids{};
};

struct TrackingUploadItemError {
  std::optional<std::string> code{}, message{};
};

struct TrackingUploadResult {
  std::int64_t shipment_id = 0;  // `shipmentId`
  bool is_success = false;       // `isSuccess`
  std::optional<TrackingUploadItemError> error{};
};

struct TrackingUploadSummary {
  std::int64_t total = 0, successful = 0, failed = 0;
};

struct TrackingUploadResponse {
  std::vector<TrackingUploadResult> results{};
  std::optional<TrackingUploadSummary> summary{};
};

}  // namespace fulfillsync::api
