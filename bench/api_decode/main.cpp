// Decoding a `GET /order` page of 250 orders with shipments, the pull jobs' hot path.
//
//   api_decode_bench [seconds-per-case] [case-name-filter]
//
// Prints the page size, then for each case the throughput in MB/s (of JSON text) and ns per order.
#include <fmt/format.h>
#include <simdjson.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fulfillsync/api/models/decode.hpp"
#include "fulfillsync/common/json_writer.hpp"

namespace {

using fulfillsync::api::ApiVersion;
using fulfillsync::api::OrderPage;
using fulfillsync::json::JsonWriter;

constexpr int kOrders = 250;

void write_measurements(JsonWriter& w, double scale) {
  w.begin_object()
      .field("depth_in", 4.0 * scale)
      .field("length_in", 10.5 * scale)
      .field("total_weight_oz", 22.4 * scale)
      .field("width_in", 8.0 * scale)
      .end_object();
}

void write_shipment_product(JsonWriter& w, int order, int line) {
  w.begin_object()
      .field("id", 555000 + line)
      .field("name", "Blue Widget, large")
      .field("reference_id", "SKU-" + std::to_string(line))
      .field("sku", "BW-" + std::to_string(line));
  w.key("inventory_items").begin_array();
  for (int item = 0; item < 1 + line % 2; ++item) {
    w.begin_object()
        .field("expiration_date", "2027-01-31T00:00:00+00:00")
        .field("id", 9000 + line * 10 + item)
        .field("is_dangerous_goods", false)
        .field("lot", "LOT-2026-" + std::to_string(item))
        .field("name", "Blue Widget, large")
        .field("quantity", 2)
        .field("quantity_committed", 2);
    w.key("serial_numbers").begin_array();
    w.value("SN-" + std::to_string(order) + "-" + std::to_string(line) + "-1");
    w.value("SN-" + std::to_string(order) + "-" + std::to_string(line) + "-2");
    w.end_array().end_object();
  }
  w.end_array().end_object();
}

void write_recipient(JsonWriter& w, int order, bool full_name) {
  w.begin_object().field("name", "Zoë Müller " + std::to_string(order));
  if (full_name) w.field("full_name", "Zoë Müller " + std::to_string(order));
  w.field("email", "customer" + std::to_string(order) + "@example.com").field("phone_number", "+1 555 0100");
  w.key("address")
      .begin_object()
      .field("address1", std::to_string(order) + " Main Street")
      .field("address2", "Apartment 5")
      .field("city", "Springfield")
      .field("company_name", "")
      .field("country", "US")
      .field("state", "IL")
      .field("zip_code", "62701")
      .end_object();
  w.end_object();
}

void write_shipment(JsonWriter& w, int order, int index) {
  const long id = 700000000L + order * 10 + index;
  w.begin_object()
      .field("id", id)
      .field("order_id", 100000000 + order)
      .field("reference_id", std::to_string(100000000 + order) + "-S" + std::to_string(index))
      .field("created_date", "2026-03-01T10:00:00.123+00:00")
      .field("actual_fulfillment_date", "2026-03-01T18:20:00+00:00")
      .field("estimated_fulfillment_date", "2026-03-02T00:00:00+00:00")
      .field("estimated_fulfillment_date_status", "AwaitingInventoryAllocation")
      .null_field("delivery_date")
      .field("last_update_at", "2026-03-01T12:34:56.789+00:00")
      .field("last_tracking_update_at", "2026-03-01T18:30:00.500+00:00")
      .field("gift_message", "Happy birthday!")
      .key("insurance_value")
      .raw_number("0")
      .key("invoice_amount")
      .raw_number("12.30")
      .field("invoice_currency_code", "USD")
      .field("is_tracking_uploaded", false);
  w.key("location").begin_object().field("id", 12).field("name", "Twin Lakes (WI)").end_object();
  w.key("measurements");
  write_measurements(w, 1.0);
  w.field("package_material_type", "Unknown");
  w.key("parent_cartons")
      .begin_array()
      .begin_object()
      .field("barcode", "PC-" + std::to_string(id))
      .field("type", "Box");
  w.key("measurements");
  write_measurements(w, 2.0);
  w.key("cartons").begin_array().begin_object().field("barcode", "C-" + std::to_string(id)).field("id", id + 1);
  w.field("type", "Box").key("measurements");
  write_measurements(w, 1.0);
  w.key("carton_details").begin_array().begin_object().key("products").begin_array();
  write_shipment_product(w, order, 1);
  w.end_array().end_object().end_array();
  w.end_object().end_array().end_object().end_array();
  w.key("products").begin_array();
  write_shipment_product(w, order, 1);
  write_shipment_product(w, order, 2);
  w.end_array();
  w.key("recipient");
  write_recipient(w, order, true);
  w.field("require_signature", false).field("ship_option", "Standard").field("status", "Completed");
  w.key("status_details").begin_array().begin_object();
  w.field("description", "Package is in transit").null_field("exception_fulfillment_center_id");
  w.key("extra_information").begin_object().key("validation_messages").begin_array().end_array().end_object();
  w.field("id", 201).null_field("inventory_id").field("name", "InTransit").end_object().end_array();
  w.key("tracking")
      .begin_object()
      .null_field("bol")
      .field("carrier", "USPS")
      .field("carrier_service", "Priority Mail")
      .null_field("pro_number")
      .field("scac", "USPS")
      .field("shipping_date", "2026-03-01T18:20:00+00:00")
      .field("tracking_number", "94001118992233" + std::to_string(10000000 + id % 10000000))
      .field("tracking_url", "https://tools.usps.com/go/TrackConfirmAction?tLabels=94001118992233" +
                                 std::to_string(10000000 + id % 10000000))
      .end_object();
  w.end_object();
}

std::string generate_page() {
  JsonWriter w(1 << 20);
  w.begin_array();
  for (int order = 0; order < kOrders; ++order) {
    w.begin_object()
        .field("id", 100000000 + order)
        .key("channel")
        .begin_object()
        .field("id", 4321)
        .field("name", "fulfillsync")
        .end_object()
        .field("created_date", "2026-03-01T09:59:59+00:00")
        .key("financials")
        .begin_object()
        .key("total_price")
        .raw_number("29.90")
        .end_object()
        .null_field("gift_message")
        .field("order_number", fmt::format("#{}", 1000 + order));
    w.key("products").begin_array();
    for (int line = 1; line <= 2; ++line) {
      w.begin_object()
          .field("external_line_id", line)
          .field("gtin", "00012345678905")
          .field("id", 555000 + line)
          .field("quantity", 2)
          .field("quantity_unit_of_measure_code", "EA")
          .field("reference_id", "SKU-" + std::to_string(line))
          .field("sku", "BW-" + std::to_string(line))
          .key("unit_price")
          .raw_number("14.95")
          .field("upc", "012345678905")
          .end_object();
    }
    w.end_array();
    w.field("purchase_date", "2026-02-28T23:00:00-05:00").key("recipient");
    write_recipient(w, order, false);
    w.field("reference_id", "shop-" + std::to_string(100000 + order)).null_field("retailer_program_data");
    w.key("shipments").begin_array();
    for (int index = 0; index < (order % 5 == 0 ? 2 : 1); ++index) write_shipment(w, order, index);
    w.end_array();
    w.field("shipping_method", "Standard");
    w.key("shipping_terms")
        .begin_object()
        .field("carrier_type", "Parcel")
        .field("payment_term", "Prepaid")
        .end_object();
    w.field("status", "Fulfilled");
    w.key("tags").begin_array().begin_object().field("name", "source").field("value", "web").end_object().end_array();
    w.field("type", "DTC").end_object();
  }
  w.end_array();
  return w.take();
}

const char* g_filter = "";

// CPU time of this thread: the machine may be shared (CI, other builds), and the figure wanted
// is what decoding costs, not how much of a core it happened to get.
double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

template <typename Decode>
void measure(const char* name, const std::string& page, double seconds, Decode&& decode_once) {
  if (std::string_view(name).find(g_filter) == std::string_view::npos) return;
  for (int warm = 0; warm < 20; ++warm) decode_once();
  long iterations = 0;
  const double start = thread_cpu_seconds();
  double now = start;
  do {
    for (int i = 0; i < 20; ++i) decode_once();
    iterations += 20;
    now = thread_cpu_seconds();
  } while (now - start < seconds);
  const double elapsed = now - start;
  const double mb_per_s = static_cast<double>(page.size()) * static_cast<double>(iterations) / elapsed / 1e6;
  const double ns_per_order = elapsed * 1e9 / static_cast<double>(iterations * kOrders);
  std::printf("%-44s %9.1f MB/s %9.0f ns/order %9.1f us/page (CPU time)\n", name, mb_per_s, ns_per_order,
              elapsed * 1e6 / static_cast<double>(iterations));
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  if (argc > 2) g_filter = argv[2];
  std::string page = generate_page();
  std::string padded = page;
  padded.reserve(page.size() + simdjson::SIMDJSON_PADDING);

  const auto check = fulfillsync::api::decode<OrderPage>(page, ApiVersion::v2026_01);
  if (!check || check->size() != kOrders) {
    std::fprintf(stderr, "generated page does not decode: %s\n",
                 check ? "wrong size" : check.error().to_string().c_str());
    return 1;
  }
  std::size_t shipments = 0;
  for (const auto& order : *check) shipments += order.shipments.size();
  std::printf("page: %d orders, %zu shipments, %zu bytes (%.0f bytes per order); simdjson kernel: %s\n", kOrders,
              shipments, page.size(), static_cast<double>(page.size()) / kOrders,
              simdjson::get_active_implementation()->name().c_str());

  volatile std::size_t sink = 0;
  measure("decode<OrderPage>(string_view) (one copy)", page, seconds, [&] {
    sink = sink + fulfillsync::api::decode<OrderPage>(std::string_view(page), ApiVersion::v2026_01)->size();
  });
  measure("decode<OrderPage>(padded std::string)", page, seconds,
          [&] { sink = sink + fulfillsync::api::decode<OrderPage>(padded, ApiVersion::v2026_01)->size(); });
  // A reference point: simdjson alone, visiting each order's members and skipping their values.
  simdjson::ondemand::parser parser;
  measure("simdjson On-Demand skim (reference)", page, seconds, [&] {
    auto document = parser.iterate(simdjson::padded_string_view(padded.data(), padded.size(), padded.capacity()));
    std::size_t count = 0;
    for (auto order : document.get_array()) {
      for (auto field : order.get_object()) {
        (void)field.value().raw_json_token();
        ++count;
      }
    }
    sink = sink + count;
  });
  return 0;
}
