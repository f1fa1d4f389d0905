#include "decoders.hpp"

namespace fulfillsync::api::detail {

bool read(Reader& reader, od::value& value, Financials& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "total_price") return read(reader, field, out.total_price);
    return true;
  });
}

bool read(Reader& reader, od::value& value, ShippingTerms& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "carrier_type") return read(reader, field, out.carrier_type);
    if (key == "payment_term") return read(reader, field, out.payment_term);
    return true;
  });
}

bool read(Reader& reader, od::value& value, RetailerAddress& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "type") return read(reader, field, out.type);
    bool known = false;
    return read_address_field(reader, key, field, out.address, known);
  });
}

bool read(Reader& reader, od::value& value, RetailerProgramData& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "addresses") return read(reader, field, out.addresses);
    if (key == "customer_ticket_number") return read(reader, field, out.customer_ticket_number);
    if (key == "delivery_date") return read(reader, field, out.delivery_date);
    if (key == "department") return read(reader, field, out.department);
    if (key == "doNotShipBeforeDate") return read(reader, field, out.do_not_ship_before_date);
    if (key == "mark_for_store") return read(reader, field, out.mark_for_store);
    if (key == "purchase_order_number") return read(reader, field, out.purchase_order_number);
    if (key == "retailer_program_type") return read(reader, field, out.retailer_program_type);
    if (key == "shipByDate") return read(reader, field, out.ship_by_date);
    return true;
  });
}

bool read(Reader& reader, od::value& value, OrderProduct& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "id") return read(reader, field, out.id);
    if (key == "external_line_id") return read(reader, field, out.external_line_id);
    if (key == "quantity") return read(reader, field, out.quantity);
    if (key == "reference_id") return read(reader, field, out.reference_id);
    if (key == "sku") return read(reader, field, out.sku);
    if (key == "gtin") return read(reader, field, out.gtin);
    if (key == "upc") return read(reader, field, out.upc);
    if (key == "quantity_unit_of_measure_code") return read(reader, field, out.quantity_unit_of_measure_code);
    if (key == "unit_price") return read(reader, field, out.unit_price);
    return true;
  });
}

bool read(Reader& reader, od::value& value, Order& out) {
  static constexpr std::string_view kRequired[] = {"id", "reference_id", "status"};
  RequiredKeys required(reader, kRequired);
  return read_object(reader, value,
                     [&](std::string_view key, od::value& field) {
                       if (key == "id") return required.read_field(0, field, out.id);
                       if (key == "reference_id") return required.read_field(1, field, out.reference_id);
                       if (key == "status") return required.read_field(2, field, out.status);
                       if (key == "shipments") return read(reader, field, out.shipments);
                       if (key == "products") return read(reader, field, out.products);
                       if (key == "recipient") return read(reader, field, out.recipient);
                       if (key == "channel") return read(reader, field, out.channel);
                       if (key == "created_date") return read(reader, field, out.created_date);
                       if (key == "purchase_date") return read(reader, field, out.purchase_date);
                       if (key == "financials") return read(reader, field, out.financials);
                       if (key == "gift_message") return read(reader, field, out.gift_message);
                       if (key == "order_number") return read(reader, field, out.order_number);
                       if (key == "shipping_method") return read(reader, field, out.shipping_method);
                       if (key == "type") return read(reader, field, out.type);
                       if (key == "retailer_program_data") return read(reader, field, out.retailer_program_data);
                       if (key == "shipping_terms") return read(reader, field, out.shipping_terms);
                       if (key == "tags") return read(reader, field, out.tags);
                       return true;
                     }) &&
         required.check();
}

bool read(Reader& reader, od::value& value, CreatedOrder& out) {
  static constexpr std::string_view kRequired[] = {"id", "reference_id", "status"};
  RequiredKeys required(reader, kRequired);
  return read_object(reader, value,
                     [&](std::string_view key, od::value& field) {
                       if (key == "id") return required.read_field(0, field, out.id);
                       if (key == "reference_id") return required.read_field(1, field, out.reference_id);
                       if (key == "status") return required.read_field(2, field, out.status);
                       if (key == "created_date") return read(reader, field, out.created_date);
                       return true;
                     }) &&
         required.check();
}

}  // namespace fulfillsync::api::detail
