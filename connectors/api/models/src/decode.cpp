#include "fulfillsync/api/models/decode.hpp"

#include "decoders.hpp"

namespace fulfillsync::api {
namespace {

namespace od = simdjson::ondemand;

// One parser and one padding buffer per thread, reused: the parser keeps its allocations between
// bodies, which is most of simdjson's per-call cost for small bodies.
struct ThreadDecoder {
  od::parser parser;
  std::string padded;
};

ThreadDecoder& thread_decoder() {
  thread_local ThreadDecoder decoder;
  return decoder;
}

JsonError malformed(simdjson::error_code error) {
  return JsonError{"", std::string("malformed JSON: ") + simdjson::error_message(error)};
}

template <typename T>
Decoded<T> decode_padded(od::parser& parser, simdjson::padded_string_view json, ApiVersion version) {
  od::document document;
  if (auto error = parser.iterate(json).get(document)) return malformed(error);
  od::value root;
  if (auto error = document.get_value().get(root)) {
    if (error != simdjson::SCALAR_DOCUMENT_AS_VALUE) return malformed(error);
    std::string_view token;
    if (document.raw_json_token().get(token) != simdjson::SUCCESS) return malformed(error);
    if (token.size() > 60) token = token.substr(0, 60);
    return JsonError{"", "expected an object or an array, found " + std::string(token)};
  }
  T out;
  detail::Reader reader(version);
  if (!detail::read(reader, root, out)) return reader.take_error();
  const char* rest = nullptr;
  if (document.current_location().get(rest) == simdjson::SUCCESS) {
    return JsonError{"", "malformed JSON: content after the top-level value"};
  }
  return out;
}

}  // namespace

template <typename T>
Decoded<T> decode(std::string_view body, ApiVersion version) {
  ThreadDecoder& decoder = thread_decoder();
  decoder.padded.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  decoder.padded.assign(body);
  auto result = decode_padded<T>(
      decoder.parser,
      simdjson::padded_string_view(decoder.padded.data(), decoder.padded.size(), decoder.padded.capacity()), version);
  constexpr std::size_t kKeptCapacity = 16 << 20;  // do not hold on to one huge body forever
  if (decoder.padded.capacity() > kKeptCapacity) std::string().swap(decoder.padded);
  return result;
}

template <typename T>
Decoded<T> decode(const std::string& body, ApiVersion version) {
  if (body.capacity() - body.size() < simdjson::SIMDJSON_PADDING) return decode<T>(std::string_view(body), version);
  return decode_padded<T>(thread_decoder().parser,
                          simdjson::padded_string_view(body.data(), body.size(), body.capacity()), version);
}

#define FULFILLSYNC_DECODABLE(T)                                            \
  template Decoded<T> decode<T>(std::string_view body, ApiVersion version); \
  template Decoded<T> decode<T>(const std::string& body, ApiVersion version);

FULFILLSYNC_DECODABLE(Order)
FULFILLSYNC_DECODABLE(CreatedOrder)
FULFILLSYNC_DECODABLE(OrderPage)
FULFILLSYNC_DECODABLE(ShipmentTimeline)
FULFILLSYNC_DECODABLE(TrackingUploadResponse)
FULFILLSYNC_DECODABLE(EstimateResponse)
FULFILLSYNC_DECODABLE(ReturnOrder)
FULFILLSYNC_DECODABLE(ReturnList)
FULFILLSYNC_DECODABLE(LotLevels)
FULFILLSYNC_DECODABLE(InventoryItem)
FULFILLSYNC_DECODABLE(Variant)
FULFILLSYNC_DECODABLE(VariantList)
FULFILLSYNC_DECODABLE(Product)
FULFILLSYNC_DECODABLE(ProductList)
FULFILLSYNC_DECODABLE(ChannelList)
FULFILLSYNC_DECODABLE(ReceivingOrder)
#undef FULFILLSYNC_DECODABLE

}  // namespace fulfillsync::api
