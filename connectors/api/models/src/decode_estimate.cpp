#include "decoders.hpp"

namespace fulfillsync::api::detail {

bool read(Reader& reader, od::value& value, Estimate& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "shipping_method") return read(reader, field, out.shipping_method);
    if (key == "estimated_currency_code") return read(reader, field, out.estimated_currency_code);
    if (key == "estimated_price") return read(reader, field, out.estimated_price);
    if (key == "fulfillment_center") return read(reader, field, out.fulfillment_center);
    if (key == "total_weight_oz") return read(reader, field, out.total_weight_oz);
    return true;
  });
}

bool read(Reader& reader, od::value& value, EstimateResponse& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "estimates") return read(reader, field, out.estimates);
    return true;
  });
}

}  // namespace fulfillsync::api::detail
