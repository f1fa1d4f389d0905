// libFuzzer target for the API body decoders and the string escaping of the encoders.
//
// Every input is handed to every decoder (they must return a value or an error, never crash,
// throw or read out of bounds), to the error-body decoder, and as text to the order encoder, whose
// output must then parse back to the same text whenever encoding accepted it.
#include <simdjson.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fulfillsync/api/models/api_error.hpp"
#include "fulfillsync/api/models/decode.hpp"
#include "fulfillsync/api/models/encode.hpp"

namespace {

using namespace fulfillsync::api;

template <typename T>
void decode_both_ways(std::string_view body, ApiVersion version) {
  const auto copied = decode<T>(body, version);
  std::string padded(body);
  padded.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  const auto in_place = decode<T>(padded, version);
  if (copied.ok() != in_place.ok()) std::abort();  // the two entry points must agree
  if (!copied) (void)copied.error().to_string();
}

void encode_round_trip(std::string_view text) {
  OrderCreateRequest order;
  order.reference_id = "fuzz";
  order.shipping_method = "Standard";
  order.products = {OrderLineRequest{.id = 1, .quantity = 1}};
  order.recipient.name = std::string(text);
  order.financials = Financials{Money{std::string(text.substr(0, 32))}};
  const auto body = encode(order, ApiVersion::v2026_07);
  if (!body) return;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(*body).get(root) != simdjson::SUCCESS) std::abort();  // accepted means valid JSON
  std::string_view name;
  if (root["recipient"]["name"].get(name) != simdjson::SUCCESS || name != text) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto version = static_cast<ApiVersion>(size % 3);
  decode_both_ways<OrderPage>(body, version);
  decode_both_ways<Order>(body, version);
  decode_both_ways<ShipmentTimeline>(body, version);
  decode_both_ways<TrackingUploadResponse>(body, version);
  decode_both_ways<EstimateResponse>(body, version);
  decode_both_ways<ReturnOrder>(body, version);
  decode_both_ways<ReturnList>(body, version);
  decode_both_ways<LotLevels>(body, version);
  decode_both_ways<InventoryItem>(body, version);
  decode_both_ways<Variant>(body, version);
  decode_both_ways<VariantList>(body, version);
  decode_both_ways<ProductList>(body, version);
  decode_both_ways<ChannelList>(body, version);
  decode_both_ways<ReceivingOrder>(body, version);
  (void)decode_api_error(body).summary();
  encode_round_trip(body);
  return 0;
}
