// Orders and shipments decoded from recorded bodies in every version: the sync jobs' hot path.
#include <gtest/gtest.h>

#include "fulfillsync/api/models/decode.hpp"
#include "recorded_bodies.hpp"

namespace fulfillsync::api {
namespace {

using testing_bodies::recorded_body;

timestamps::TimePoint at(std::string_view iso) { return *timestamps::parse_iso8601(iso); }

class OrderDecoding : public ::testing::TestWithParam<ApiVersion> {};

TEST_P(OrderDecoding, PageWithShipmentsCartonsLotsAndTracking) {
  const auto page = decode<OrderPage>(recorded_body(GetParam(), "order_page.json"), GetParam());
  ASSERT_TRUE(page) << page.error().to_string();
  ASSERT_EQ(page->size(), 2u);

  const Order& order = page->at(0);
  EXPECT_EQ(order.id, 100200300);
  EXPECT_EQ(order.reference_id, "shop-1001");
  EXPECT_EQ(order.status, "Fulfilled");
  EXPECT_EQ(order.type, "DTC");
  EXPECT_EQ(order.channel->id, 4321);
  ASSERT_TRUE(order.financials && order.financials->total_price);
  EXPECT_EQ(order.financials->total_price->text, "29.90");  // exact, trailing zero kept
  ASSERT_EQ(order.products.size(), 1u);
  EXPECT_EQ(order.products[0].unit_price->text, "14.95");
  EXPECT_EQ(order.products[0].gtin, "00012345678905");
  EXPECT_EQ(order.purchase_date->at, at("2026-03-01T04:00:00Z"));  // -05:00 offset applied
  EXPECT_EQ(order.recipient->name, "Zoë Müller");
  EXPECT_EQ(order.recipient->address->zip_code, "62701");
  EXPECT_FALSE(order.gift_message.has_value());
  ASSERT_EQ(order.tags.size(), 1u);
  EXPECT_EQ(order.tags[0].name, "source");
  EXPECT_EQ(order.tags[0].value, "web");

  ASSERT_EQ(order.shipments.size(), 1u);
  const Shipment& shipment = order.shipments[0];
  EXPECT_EQ(shipment.id, 700800900);
  EXPECT_EQ(shipment.order_id, 100200300);
  EXPECT_EQ(shipment.status, "Completed");
  EXPECT_EQ(shipment.last_update_at.at, at("2026-03-01T12:34:56.789+00:00"));
  EXPECT_EQ(shipment.last_update_at.to_iso8601(), "2026-03-01T12:34:56.789+00:00");
  EXPECT_EQ(shipment.last_tracking_update_at->to_iso8601(), "2026-03-01T18:30:00.500+00:00");
  EXPECT_FALSE(shipment.delivery_date.has_value());
  EXPECT_EQ(shipment.invoice_amount->text, "12.30");
  EXPECT_EQ(shipment.insurance_value->text, "0");
  EXPECT_EQ(shipment.is_tracking_uploaded, false);
  EXPECT_EQ(shipment.location->name, "Twin Lakes (WI)");
  EXPECT_DOUBLE_EQ(*shipment.measurements->total_weight_oz, 22.4);
  EXPECT_EQ(shipment.recipient->full_name, "Zoë Müller");

  ASSERT_TRUE(shipment.tracking.has_value());
  EXPECT_EQ(shipment.tracking->tracking_number, "9400111899223344556677");
  EXPECT_EQ(shipment.tracking->carrier, "USPS");
  EXPECT_FALSE(shipment.tracking->bol.has_value());
  EXPECT_EQ(shipment.tracking->shipping_date->at, at("2026-03-01T18:20:00Z"));

  ASSERT_EQ(shipment.status_details.size(), 1u);
  EXPECT_EQ(shipment.status_details[0].id, 201);
  EXPECT_EQ(shipment.status_details[0].name, "InTransit");

  ASSERT_EQ(shipment.products.size(), 1u);
  const ShipmentInventoryItem& item = shipment.products[0].inventory_items.at(0);
  EXPECT_EQ(item.lot, "LOT-2026-A");
  EXPECT_EQ(item.serial_numbers, (std::vector<std::string>{"SN-0001", "SN-0002"}));
  EXPECT_EQ(item.expiration_date->at, at("2027-01-31"));

  ASSERT_EQ(shipment.parent_cartons.size(), 1u);
  const Carton& carton = shipment.parent_cartons[0].cartons.at(0);
  EXPECT_EQ(carton.id, 71);
  EXPECT_EQ(carton.barcode, "C-1");
  EXPECT_EQ(carton.carton_details.at(0).products.at(0).sku, "BW-001");

  // `store_order_id` exists only before 2026-01.
  EXPECT_EQ(shipment.store_order_id.has_value(), GetParam() == ApiVersion::v2025_07);
  if (GetParam() == ApiVersion::v2025_07) {
    EXPECT_EQ(shipment.store_order_id, "#1300");
  }
}

TEST_P(OrderDecoding, B2BOrderWithRetailerProgramDataAndNulls) {
  const auto page = decode<OrderPage>(recorded_body(GetParam(), "order_page.json"), GetParam());
  ASSERT_TRUE(page) << page.error().to_string();
  const Order& order = page->at(1);
  EXPECT_EQ(order.type, "B2B");
  EXPECT_EQ(order.financials->total_price->text, "1250.00");  // money sent as a string
  EXPECT_TRUE(order.products.empty());                        // null array
  EXPECT_FALSE(order.order_number.has_value());
  EXPECT_FALSE(order.shipping_terms.has_value());
  EXPECT_TRUE(order.tags.empty());
  EXPECT_EQ(order.created_date->at, at("2026-03-02T08:00:00Z"));
  ASSERT_TRUE(order.retailer_program_data.has_value());
  const RetailerProgramData& retail = *order.retailer_program_data;
  ASSERT_EQ(retail.addresses.size(), 1u);
  EXPECT_EQ(retail.addresses[0].type, "MarkFor");
  EXPECT_EQ(retail.addresses[0].address.address1, "42 Mall Rd");
  EXPECT_EQ(retail.ship_by_date->at, at("2026-03-08"));
  EXPECT_EQ(retail.do_not_ship_before_date->at, at("2026-03-05"));
  EXPECT_EQ(retail.purchase_order_number, "PO-9");

  const Shipment& shipment = order.shipments.at(0);
  EXPECT_EQ(shipment.status, "Exception");
  EXPECT_FALSE(shipment.tracking.has_value());
  EXPECT_EQ(shipment.status_details.at(0).id, 303);
  EXPECT_EQ(shipment.status_details.at(0).validation_messages, (std::vector<std::string>{"SKU BW-001 has no stock"}));
}

TEST_P(OrderDecoding, CreatedOrder) {
  const auto order = decode<Order>(recorded_body(GetParam(), "order_created.json"), GetParam());
  ASSERT_TRUE(order) << order.error().to_string();
  EXPECT_EQ(order->status, "Processing");
  EXPECT_EQ(order->shipments.at(0).status, "None");
  EXPECT_FALSE(order->shipments.at(0).tracking.has_value());
}

TEST_P(OrderDecoding, ShipmentTimeline) {
  const auto timeline = decode<ShipmentTimeline>(recorded_body(GetParam(), "shipment_timeline.json"), GetParam());
  ASSERT_TRUE(timeline) << timeline.error().to_string();
  ASSERT_EQ(timeline->size(), 3u);
  EXPECT_EQ(timeline->at(1).log_type_id, 610);
  EXPECT_EQ(timeline->at(1).timestamp.to_iso8601(), "2026-03-01T14:05:00.250+00:00");
  EXPECT_EQ(timeline->at(1).metadata,
            (std::vector<std::pair<std::string, std::string>>{{"picker", "17"}, {"bin", "A-3"}}));
  EXPECT_TRUE(timeline->at(2).metadata.empty());
}

TEST_P(OrderDecoding, TrackingUploadResponseWithItemFailure) {
  const auto response =
      decode<TrackingUploadResponse>(recorded_body(GetParam(), "tracking_upload_response.json"), GetParam());
  ASSERT_TRUE(response) << response.error().to_string();
  ASSERT_EQ(response->results.size(), 2u);
  EXPECT_TRUE(response->results[0].is_success);
  EXPECT_FALSE(response->results[0].error.has_value());
  EXPECT_EQ(response->results[1].shipment_id, 700800901);
  EXPECT_FALSE(response->results[1].is_success);
  EXPECT_EQ(response->results[1].error->code, "ShipmentNotFound");
  EXPECT_EQ(response->summary->failed, 1);
}

TEST_P(OrderDecoding, Estimates) {
  const auto response = decode<EstimateResponse>(recorded_body(GetParam(), "estimate_response.json"), GetParam());
  ASSERT_TRUE(response) << response.error().to_string();
  ASSERT_EQ(response->estimates.size(), 2u);
  EXPECT_EQ(response->estimates[1].estimated_price->text, "19.10");
  EXPECT_EQ(response->estimates[1].fulfillment_center->id, 3);
  EXPECT_EQ(response->estimates[0].shipping_method, "Standard");
}

TEST_P(OrderDecoding, InPlaceDecodingOfAPaddedStringMatchesTheCopy) {
  std::string body = recorded_body(GetParam(), "order_page.json");
  body.reserve(body.size() + 64);
  const auto in_place = decode<OrderPage>(body, GetParam());
  const auto copied = decode<OrderPage>(std::string_view(body), GetParam());
  ASSERT_TRUE(in_place && copied);
  EXPECT_EQ(in_place->at(0).shipments.at(0).tracking->tracking_number,
            copied->at(0).shipments.at(0).tracking->tracking_number);
}

INSTANTIATE_TEST_SUITE_P(AllVersions, OrderDecoding, ::testing::ValuesIn(testing_bodies::kAllVersions),
                         testing_bodies::VersionName());

}  // namespace
}  // namespace fulfillsync::api
