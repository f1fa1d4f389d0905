#include "fulfillsync/api/models/encode.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <string_view>
#include <vector>

#include "fulfillsync/common/json_writer.hpp"

namespace fulfillsync::api {
namespace {

// JsonWriter plus the path of the value being written, so a refused value can be named.
class BodyWriter {
 public:
  explicit BodyWriter(ApiVersion version) : version_(version), writer_(512) {}

  ApiVersion version() const { return version_; }
  json::JsonWriter& json() { return writer_; }

  void enter(std::string_view key) { path_.emplace_back(key); }
  void enter(std::size_t index) { path_.push_back(fmt::format("[{}]", index)); }
  void leave() { path_.pop_back(); }

  // A refused value: remembered with its path (the first only: later ones are usually its
  // consequences), and written as null so the writer stays balanced until finish() drops the body.
  void refuse_value(std::string message) {
    fail(std::move(message));
    writer_.null();
  }

  void fail(std::string message) {
    if (error_) return;
    JsonError error{"", std::move(message)};
    for (const std::string& segment : path_) {
      if (!error.path.empty() && segment.front() != '[') error.path.push_back('.');
      error.path += segment;
    }
    error_ = std::move(error);
  }

  Encoded finish() {
    if (error_) return *error_;
    return writer_.take();
  }

 private:
  ApiVersion version_;
  json::JsonWriter writer_;
  std::vector<std::string> path_;
  std::optional<JsonError> error_;
};

void put_value(BodyWriter& w, std::string_view text) {
  if (!simdjson::validate_utf8(text.data(), text.size())) return w.refuse_value("not valid UTF-8");
  w.json().value(text);
}
void put_value(BodyWriter& w, const std::string& text) { put_value(w, std::string_view(text)); }
void put_value(BodyWriter& w, std::int64_t number) { w.json().value(number); }
void put_value(BodyWriter& w, std::int32_t number) { w.json().value(number); }
void put_value(BodyWriter& w, bool flag) { w.json().value(flag); }
void put_value(BodyWriter& w, const Money& money) {
  if (!Money::is_sendable_text(money.text)) {
    return w.refuse_value(fmt::format("\"{}\" is not a decimal number of at most 18 digits and 12 decimals",
                                      money.text.substr(0, 40)));
  }
  w.json().raw_number(money.text);
}
void put_value(BodyWriter& w, const DateTime& when) { w.json().value(when.to_iso8601()); }

template <typename T>
void put_value(BodyWriter& w, const std::vector<T>& items);
void put_value(BodyWriter& w, const Address& address);
void put_value(BodyWriter& w, const Recipient& recipient);
void put_value(BodyWriter& w, const Tag& tag);

// One member: key, then value, with the key on the path while the value is written.
template <typename T>
void put(BodyWriter& w, std::string_view key, const T& value) {
  w.json().key(key);
  w.enter(key);
  put_value(w, value);
  w.leave();
}

// Unset optional members are omitted.
template <typename T>
void put(BodyWriter& w, std::string_view key, const std::optional<T>& value) {
  if (value) put(w, key, *value);
}

template <typename T>
void put_value(BodyWriter& w, const std::vector<T>& items) {
  w.json().begin_array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    w.enter(i);
    put_value(w, items[i]);
    w.leave();
  }
  w.json().end_array();
}

// A string member within the spec's length limits.
void put_text(BodyWriter& w, std::string_view key, std::string_view text, std::size_t min_length,
              std::size_t max_length) {
  const std::size_t length = provider_length(text);
  if (length < min_length || length > max_length) {
    w.enter(key);
    w.fail("length " + std::to_string(length) + " outside " + std::to_string(min_length) + " to " +
           std::to_string(max_length));
    w.leave();
  }
  put(w, key, text);
}
void put_text(BodyWriter& w, std::string_view key, const std::optional<std::string>& text, std::size_t max_length) {
  if (text) put_text(w, key, *text, 0, max_length);
}

template <typename T>
void require_items(BodyWriter& w, std::string_view key, const std::vector<T>& items) {
  if (!items.empty()) return;
  w.enter(key);
  w.fail("at least one item is required");
  w.leave();
}

void put_address_members(BodyWriter& w, const Address& address) {
  put(w, "address1", address.address1);
  put(w, "address2", address.address2);
  put(w, "city", address.city);
  put(w, "company_name", address.company_name);
  put(w, "country", address.country);
  put(w, "state", address.state);
  put(w, "zip_code", address.zip_code);
}

void put_value(BodyWriter& w, const Address& address) {
  w.json().begin_object();
  put_address_members(w, address);
  w.json().end_object();
}

void put_value(BodyWriter& w, const Recipient& recipient) {
  w.json().begin_object();
  put(w, "name", recipient.name);
  put(w, "email", recipient.email);
  put(w, "phone_number", recipient.phone_number);
  put(w, "full_name", recipient.full_name);
  put(w, "address", recipient.address);
  w.json().end_object();
}

void put_value(BodyWriter& w, const Tag& tag) {
  w.json().begin_object();
  put(w, "name", tag.name);
  put(w, "value", tag.value);
  w.json().end_object();
}

void put_value(BodyWriter& w, const OrderLineRequest& line) {
  w.json().begin_object();
  put(w, "id", line.id);
  put(w, "reference_id", line.reference_id);
  put(w, "name", line.name);
  put(w, "quantity", line.quantity);
  put(w, "external_line_id", line.external_line_id);
  put(w, "quantity_unit_of_measure_code", line.quantity_unit_of_measure_code);
  w.json().end_object();
}

void put_value(BodyWriter& w, const Financials& financials) {
  w.json().begin_object();
  put(w, "total_price", financials.total_price);
  w.json().end_object();
}

void put_value(BodyWriter& w, const ShippingTerms& terms) {
  w.json().begin_object();
  put(w, "carrier_type", terms.carrier_type);
  put(w, "payment_term", terms.payment_term);
  w.json().end_object();
}

void put_value(BodyWriter& w, const RetailerAddress& address) {
  w.json().begin_object();
  put_address_members(w, address.address);
  put(w, "type", address.type);
  w.json().end_object();
}

void put_value(BodyWriter& w, const RetailerProgramData& data) {
  w.json().begin_object();
  put(w, "addresses", data.addresses);
  put(w, "customer_ticket_number", data.customer_ticket_number);
  put(w, "delivery_date", data.delivery_date);
  put(w, "department", data.department);
  put(w, "doNotShipBeforeDate", data.do_not_ship_before_date);
  put(w, "mark_for_store", data.mark_for_store);
  put(w, "purchase_order_number", data.purchase_order_number);
  put(w, "retailer_program_type", data.retailer_program_type);
  put(w, "shipByDate", data.ship_by_date);
  w.json().end_object();
}

void put_value(BodyWriter& w, const ReturnFulfillmentCenter& center) {
  w.json().begin_object();
  put(w, "id", center.id);
  put(w, "name", center.name);
  w.json().end_object();
}

// Lot members exist only on `PUT /return/{id}` lines from 2026-01.
void put_return_line(BodyWriter& w, const ReturnLineRequest& line, bool lots_allowed) {
  w.json().begin_object();
  put(w, "id", line.id);
  put(w, "quantity", line.quantity);
  put(w, "requested_action", line.requested_action);
  if (!lots_allowed && (line.lot_number || line.lot_date)) {
    w.fail("lot_number and lot_date are accepted only by PUT /return/{id} from 2026-01");
  }
  put(w, "lot_number", line.lot_number);
  put(w, "lot_date", line.lot_date);
  w.json().end_object();
}

Encoded encode_return(const ReturnCreateRequest& request, ApiVersion version, bool lots_allowed) {
  BodyWriter w(version);
  w.json().begin_object();
  put_text(w, "reference_id", request.reference_id, 1, 50);
  put(w, "fulfillment_center", request.fulfillment_center);
  require_items(w, "inventory", request.inventory);
  w.json().key("inventory").begin_array();
  w.enter("inventory");
  for (std::size_t i = 0; i < request.inventory.size(); ++i) {
    w.enter(i);
    put_return_line(w, request.inventory[i], lots_allowed);
    w.leave();
  }
  w.leave();
  w.json().end_array();
  put(w, "original_shipment_id", request.original_shipment_id);
  put(w, "tags", request.tags);
  put_text(w, "tracking_number", request.tracking_number, 500);
  w.json().end_object();
  return w.finish();
}

void put_value(BodyWriter& w, const EstimateLine& line) {
  if (line.id.has_value() == line.reference_id.has_value()) w.fail("exactly one of id and reference_id is required");
  w.json().begin_object();
  put(w, "id", line.id);
  put(w, "reference_id", line.reference_id);
  put(w, "quantity", line.quantity);
  w.json().end_object();
}

}  // namespace

Encoded encode(const OrderCreateRequest& request, ApiVersion version) {
  BodyWriter w(version);
  w.json().begin_object();
  put_text(w, "reference_id", request.reference_id, 1, 300);
  put_text(w, "shipping_method", request.shipping_method, 1, std::string::npos);
  require_items(w, "products", request.products);
  put(w, "products", request.products);
  put(w, "recipient", request.recipient);
  put(w, "financials", request.financials);
  put_text(w, "gift_message", request.gift_message, 500);
  put(w, "location_id", request.location_id);
  put_text(w, "order_number", request.order_number, 400);
  put_text(w, "origin_platform_program", request.origin_platform_program, 100);
  put(w, "purchase_date", request.purchase_date);
  put(w, "retailer_program_data", request.retailer_program_data);
  put_text(w, "sales_channel", request.sales_channel, 100);
  put(w, "shipping_terms", request.shipping_terms);
  put(w, "tags", request.tags);
  put(w, "type", request.type);
  w.json().end_object();
  return w.finish();
}

Encoded encode(const ReturnCreateRequest& request, ApiVersion version) {
  return encode_return(request, version, false);
}

Encoded encode(const ReturnUpdateRequest& request, ApiVersion version) {
  return encode_return(request, version, at_least(version, ApiVersion::v2026_01));
}

Encoded encode(const TrackingUploadRequest& request, ApiVersion version) {
  BodyWriter w(version);
  w.json().begin_object();
  put(w, "is_tracking_uploaded", request.is_tracking_uploaded);
  require_items(w, "shipment_ids", request.shipment_ids);
  put(w, "shipment_ids", request.shipment_ids);
  w.json().end_object();
  return w.finish();
}

Encoded encode(const SetExternalSyncRequest& request, ApiVersion version) {
  BodyWriter w(version);
  w.json().begin_object();
  put(w, "ids", request.ids);
  put(w, "is_external_sync", request.is_external_sync);
  w.json().end_object();
  return w.finish();
}

Encoded encode(const EstimateRequest& request, ApiVersion version) {
  BodyWriter w(version);
  w.json().begin_object();
  put(w, "address", request.address);
  require_items(w, "products", request.products);
  put(w, "products", request.products);
  put(w, "shipping_methods", request.shipping_methods);
  w.json().end_object();
  return w.finish();
}

std::size_t provider_length(std::string_view utf8) {
  std::size_t units = 0;
  for (unsigned char c : utf8) {
    if ((c & 0xC0) != 0x80) ++units;  // a lead byte starts a code point
    if ((c & 0xF8) == 0xF0) ++units;  // four-byte sequences need a surrogate pair
  }
  return units;
}

}  // namespace fulfillsync::api
