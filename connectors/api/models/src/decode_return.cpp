#include "decoders.hpp"

namespace fulfillsync::api::detail {

bool read(Reader& reader, od::value& value, ReturnActionRequested& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "action") return read(reader, field, out.action);
    if (key == "action_type") return read(reader, field, out.action_type);
    if (key == "instructions") return read(reader, field, out.instructions);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ReturnActionTaken& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "action") return read(reader, field, out.action);
    if (key == "action_reason") return read(reader, field, out.action_reason);
    if (key == "image_url") return read(reader, field, out.image_url);
    if (key == "quantity_processed") return read(reader, field, out.quantity_processed);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ReturnLotInformation& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "number") return read(reader, field, out.number);
    if (key == "expiration") return read(reader, field, out.expiration);
    if (key == "minimumShelfLife") return read(reader, field, out.minimum_shelf_life);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ReturnLine& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "id") return read(reader, field, out.id);
    if (key == "quantity") return read(reader, field, out.quantity);
    if (key == "name") return read(reader, field, out.name);
    if (key == "sku") return read(reader, field, out.sku);
    if (key == "action_requested") return read(reader, field, out.action_requested);
    if (key == "action_taken") return read(reader, field, out.action_taken);
    if (key == "lot_information") return read(reader, field, out.lot_information);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ReturnTransaction& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "amount") return read(reader, field, out.amount);
    if (key == "transaction_type") return read(reader, field, out.transaction_type);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ReturnInvoice& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "amount") return read(reader, field, out.amount);
    if (key == "currency_code") return read(reader, field, out.currency_code);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ReturnStatusChange& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "status") return read(reader, field, out.status);
    if (key == "timestamp") return read(reader, field, out.timestamp);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ReturnOrder& out) {
  static constexpr std::string_view kRequired[] = {"id", "reference_id", "status"};
  RequiredKeys required(reader, kRequired);
  return read_object(reader, value,
                     [&](std::string_view key, od::value& field) {
                       if (key == "id") return required.read_field(0, field, out.id);
                       if (key == "reference_id") return required.read_field(1, field, out.reference_id);
                       if (key == "status") return required.read_field(2, field, out.status);
                       if (key == "channel") return read(reader, field, out.channel);
                       if (key == "fulfillment_center") return read(reader, field, out.fulfillment_center);
                       if (key == "customer_name") return read(reader, field, out.customer_name);
                       if (key == "return_type") return read(reader, field, out.return_type);
                       if (key == "store_order_id") return read_string_or_integer(reader, field, out.store_order_id);
                       if (key == "tracking_number") return read(reader, field, out.tracking_number);
                       if (key == "insert_date") return read(reader, field, out.insert_date);
                       if (key == "completed_date") return read(reader, field, out.completed_date);
                       if (key == "inventory") return read(reader, field, out.inventory);
                       if (key == "invoice_amount") return read(reader, field, out.invoice_amount);
                       if (key == "invoice") return read(reader, field, out.invoice);
                       if (key == "original_shipment_id") return read(reader, field, out.original_shipment_id);
                       if (key == "transactions") return read(reader, field, out.transactions);
                       if (key == "arrived_date") return read(reader, field, out.arrived_date);
                       if (key == "awaiting_arrival_date") return read(reader, field, out.awaiting_arrival_date);
                       if (key == "cancelled_date") return read(reader, field, out.cancelled_date);
                       if (key == "processing_date") return read(reader, field, out.processing_date);
                       if (key == "shipment_tracking_number") return read(reader, field, out.shipment_tracking_number);
                       if (key == "status_history") return read(reader, field, out.status_history);
                       return true;
                     }) &&
         required.check();
}

bool read(Reader& reader, od::value& value, ReturnList& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "items") return read(reader, field, out.items);
    if (key == "first") return read(reader, field, out.first);
    if (key == "last") return read(reader, field, out.last);
    if (key == "next") return read(reader, field, out.next);
    if (key == "prev") return read(reader, field, out.prev);
    return true;
  });
}

}  // namespace fulfillsync::api::detail
