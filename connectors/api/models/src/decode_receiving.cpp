#include "decoders.hpp"

namespace fulfillsync::api::detail {

bool read(Reader& reader, od::value& value, ReceivingFulfillmentCenter& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "id") return read(reader, field, out.id);
    if (key == "name") return read(reader, field, out.name);
    if (key == "address1") return read(reader, field, out.address1);
    if (key == "address2") return read(reader, field, out.address2);
    if (key == "city") return read(reader, field, out.city);
    if (key == "state") return read(reader, field, out.state);
    if (key == "zip_code") return read(reader, field, out.zip_code);
    if (key == "country") return read(reader, field, out.country);
    if (key == "email") return read(reader, field, out.email);
    if (key == "phone_number") return read(reader, field, out.phone_number);
    if (key == "timezone") return read(reader, field, out.timezone);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ReceivingInventoryQuantity& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "inventory_id") return read(reader, field, out.inventory_id);
    if (key == "sku") return read(reader, field, out.sku);
    if (key == "expected_quantity") return read(reader, field, out.expected_quantity);
    if (key == "received_quantity") return read(reader, field, out.received_quantity);
    if (key == "stowed_quantity") return read(reader, field, out.stowed_quantity);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ReceivingStatusChange& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "id") return read(reader, field, out.id);
    if (key == "status") return read(reader, field, out.status);
    if (key == "timestamp") return read(reader, field, out.timestamp);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ReceivingFreight& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "carrier") return read(reader, field, out.carrier);
    if (key == "bol_number") return read(reader, field, out.bol_number);
    if (key == "container_number") return read(reader, field, out.container_number);
    if (key == "vessel_name") return read(reader, field, out.vessel_name);
    if (key == "freight_forwarder") return read(reader, field, out.freight_forwarder);
    if (key == "notes") return read(reader, field, out.notes);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ReceivingOrder& out) {
  static constexpr std::string_view kRequired[] = {"id", "status"};
  RequiredKeys required(reader, kRequired);
  return read_object(reader, value,
                     [&](std::string_view key, od::value& field) {
                       if (key == "id") return required.read_field(0, field, out.id);
                       if (key == "status") return required.read_field(1, field, out.status);
                       if (key == "box_labels_uri") return read(reader, field, out.box_labels_uri);
                       if (key == "box_packaging_type") return read(reader, field, out.box_packaging_type);
                       if (key == "package_type") return read(reader, field, out.package_type);
                       if (key == "purchase_order_number") return read(reader, field, out.purchase_order_number);
                       if (key == "expected_arrival_date") return read(reader, field, out.expected_arrival_date);
                       if (key == "insert_date") return read(reader, field, out.insert_date);
                       if (key == "last_updated_date") return read(reader, field, out.last_updated_date);
                       if (key == "external_sync_timestamp") return read(reader, field, out.external_sync_timestamp);
                       if (key == "fulfillment_center") return read(reader, field, out.fulfillment_center);
                       if (key == "inventory_quantities") return read(reader, field, out.inventory_quantities);
                       if (key == "status_history") return read(reader, field, out.status_history);
                       if (key == "freight") return read(reader, field, out.freight);
                       return true;
                     }) &&
         required.check();
}

}  // namespace fulfillsync::api::detail
