#include "decoders.hpp"

namespace fulfillsync::api::detail {

bool read(Reader& reader, od::value& value, Measurements& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "depth_in") return read(reader, field, out.depth_in);
    if (key == "length_in") return read(reader, field, out.length_in);
    if (key == "total_weight_oz") return read(reader, field, out.total_weight_oz);
    if (key == "width_in") return read(reader, field, out.width_in);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ShipmentInventoryItem& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "id") return read(reader, field, out.id);
    if (key == "name") return read(reader, field, out.name);
    if (key == "lot") return read(reader, field, out.lot);
    if (key == "expiration_date") return read(reader, field, out.expiration_date);
    if (key == "is_dangerous_goods") return read(reader, field, out.is_dangerous_goods);
    if (key == "quantity") return read(reader, field, out.quantity);
    if (key == "quantity_committed") return read(reader, field, out.quantity_committed);
    if (key == "serial_numbers") return read(reader, field, out.serial_numbers);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ShipmentProduct& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "id") return read(reader, field, out.id);
    if (key == "name") return read(reader, field, out.name);
    if (key == "reference_id") return read(reader, field, out.reference_id);
    if (key == "sku") return read(reader, field, out.sku);
    if (key == "inventory_items") return read(reader, field, out.inventory_items);
    return true;
  });
}

bool read(Reader& reader, od::value& value, CartonDetail& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "products") return read(reader, field, out.products);
    return true;
  });
}

bool read(Reader& reader, od::value& value, Carton& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "id") return read(reader, field, out.id);
    if (key == "barcode") return read(reader, field, out.barcode);
    if (key == "type") return read(reader, field, out.type);
    if (key == "measurements") return read(reader, field, out.measurements);
    if (key == "carton_details") return read(reader, field, out.carton_details);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ParentCarton& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "barcode") return read(reader, field, out.barcode);
    if (key == "type") return read(reader, field, out.type);
    if (key == "measurements") return read(reader, field, out.measurements);
    if (key == "cartons") return read(reader, field, out.cartons);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ShipmentStatusDetail& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "id") return read(reader, field, out.id);
    if (key == "name") return read(reader, field, out.name);
    if (key == "description") return read(reader, field, out.description);
    if (key == "exception_fulfillment_center_id") return read(reader, field, out.exception_fulfillment_center_id);
    if (key == "inventory_id") return read(reader, field, out.inventory_id);
    if (key == "extra_information") {
      return unless_null(reader, field, [&] {
        return read_object(reader, field, [&](std::string_view inner_key, od::value& inner) {
          if (inner_key == "validation_messages") return read(reader, inner, out.validation_messages);
          return true;
        });
      });
    }
    return true;
  });
}

bool read(Reader& reader, od::value& value, Tracking& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "tracking_number") return read(reader, field, out.tracking_number);
    if (key == "tracking_url") return read(reader, field, out.tracking_url);
    if (key == "carrier") return read(reader, field, out.carrier);
    if (key == "carrier_service") return read(reader, field, out.carrier_service);
    if (key == "bol") return read(reader, field, out.bol);
    if (key == "pro_number") return read(reader, field, out.pro_number);
    if (key == "scac") return read(reader, field, out.scac);
    if (key == "shipping_date") return read(reader, field, out.shipping_date);
    return true;
  });
}

bool read(Reader& reader, od::value& value, Shipment& out) {
  static constexpr std::string_view kRequired[] = {"id", "status", "last_update_at"};
  RequiredKeys required(reader, kRequired);
  return read_object(reader, value,
                     [&](std::string_view key, od::value& field) {
                       if (key == "id") return required.read_field(0, field, out.id);
                       if (key == "status") return required.read_field(1, field, out.status);
                       if (key == "last_update_at") return required.read_field(2, field, out.last_update_at);
                       if (key == "order_id") return read(reader, field, out.order_id);
                       if (key == "reference_id") return read(reader, field, out.reference_id);
                       if (key == "store_order_id") return read_string_or_integer(reader, field, out.store_order_id);
                       if (key == "created_date") return read(reader, field, out.created_date);
                       if (key == "actual_fulfillment_date") return read(reader, field, out.actual_fulfillment_date);
                       if (key == "estimated_fulfillment_date") {
                         return read(reader, field, out.estimated_fulfillment_date);
                       }
                       if (key == "delivery_date") return read(reader, field, out.delivery_date);
                       if (key == "last_tracking_update_at") return read(reader, field, out.last_tracking_update_at);
                       if (key == "estimated_fulfillment_date_status") {
                         return read(reader, field, out.estimated_fulfillment_date_status);
                       }
                       if (key == "gift_message") return read(reader, field, out.gift_message);
                       if (key == "insurance_value") return read(reader, field, out.insurance_value);
                       if (key == "invoice_amount") return read(reader, field, out.invoice_amount);
                       if (key == "invoice_currency_code") return read(reader, field, out.invoice_currency_code);
                       if (key == "is_tracking_uploaded") return read(reader, field, out.is_tracking_uploaded);
                       if (key == "require_signature") return read(reader, field, out.require_signature);
                       if (key == "location") return read(reader, field, out.location);
                       if (key == "measurements") return read(reader, field, out.measurements);
                       if (key == "package_material_type") return read(reader, field, out.package_material_type);
                       if (key == "ship_option") return read(reader, field, out.ship_option);
                       if (key == "parent_cartons") return read(reader, field, out.parent_cartons);
                       if (key == "products") return read(reader, field, out.products);
                       if (key == "recipient") return read(reader, field, out.recipient);
                       if (key == "status_details") return read(reader, field, out.status_details);
                       if (key == "tracking") return read(reader, field, out.tracking);
                       return true;
                     }) &&
         required.check();
}

bool read(Reader& reader, od::value& value, TimelineEntry& out) {
  static constexpr std::string_view kRequired[] = {"timestamp"};
  RequiredKeys required(reader, kRequired);
  return read_object(reader, value,
                     [&](std::string_view key, od::value& field) {
                       if (key == "timestamp") return required.read_field(0, field, out.timestamp);
                       if (key == "log_type_id") return read(reader, field, out.log_type_id);
                       if (key == "log_type_name") return read(reader, field, out.log_type_name);
                       if (key == "log_type_text") return read(reader, field, out.log_type_text);
                       if (key == "metadata") {
                         return unless_null(reader, field, [&] {
                           return read_object(reader, field, [&](std::string_view meta_key, od::value& meta) {
                             std::optional<std::string> text;
                             if (!read(reader, meta, text)) return false;
                             if (text) out.metadata.emplace_back(meta_key, std::move(*text));
                             return true;
                           });
                         });
                       }
                       return true;
                     }) &&
         required.check();
}

bool read(Reader& reader, od::value& value, TrackingUploadItemError& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "code") return read(reader, field, out.code);
    if (key == "message") return read(reader, field, out.message);
    return true;
  });
}

bool read(Reader& reader, od::value& value, TrackingUploadResult& out) {
  static constexpr std::string_view kRequired[] = {"shipmentId", "isSuccess"};
  RequiredKeys required(reader, kRequired);
  return read_object(reader, value,
                     [&](std::string_view key, od::value& field) {
                       if (key == "shipmentId") return required.read_field(0, field, out.shipment_id);
                       if (key == "isSuccess") return required.read_field(1, field, out.is_success);
                       if (key == "error") return read(reader, field, out.error);
                       return true;
                     }) &&
         required.check();
}

bool read(Reader& reader, od::value& value, TrackingUploadSummary& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "total") return read(reader, field, out.total);
    if (key == "successful") return read(reader, field, out.successful);
    if (key == "failed") return read(reader, field, out.failed);
    return true;
  });
}

bool read(Reader& reader, od::value& value, TrackingUploadResponse& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "results") return read(reader, field, out.results);
    if (key == "summary") return read(reader, field, out.summary);
    return true;
  });
}

}  // namespace fulfillsync::api::detail
