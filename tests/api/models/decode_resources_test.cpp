// Returns, inventory, channels, variants and receiving orders decoded from recorded bodies in every
// version.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fulfillsync/api/models/decode.hpp"
#include "recorded_bodies.hpp"

namespace fulfillsync::api {
namespace {

using testing_bodies::recorded_body;

timestamps::TimePoint at(std::string_view iso) { return *timestamps::parse_iso8601(iso); }

class ResourceDecoding : public ::testing::TestWithParam<ApiVersion> {};

TEST_P(ResourceDecoding, ReturnCreateForm) {
  const auto created = decode<ReturnOrder>(recorded_body(GetParam(), "return_created.json"), GetParam());
  ASSERT_TRUE(created) << created.error().to_string();
  EXPECT_EQ(created->id, 5001);
  EXPECT_EQ(created->reference_id, "RMA-1");
  EXPECT_EQ(created->status, "AwaitingArrival");
  EXPECT_EQ(created->invoice_amount->text, "0");
  EXPECT_FALSE(created->invoice.has_value());
  EXPECT_EQ(created->original_shipment_id, 700800900);
  EXPECT_EQ(created->store_order_id, "#1001");
  ASSERT_EQ(created->inventory.size(), 1u);
  EXPECT_EQ(created->inventory[0].action_requested->action, "Restock");
  EXPECT_TRUE(created->inventory[0].action_taken.empty());
}

TEST_P(ResourceDecoding, ReturnDetailForm) {
  const auto detail = decode<ReturnOrder>(recorded_body(GetParam(), "return_detail.json"), GetParam());
  ASSERT_TRUE(detail) << detail.error().to_string();
  EXPECT_EQ(detail->status, "Completed");
  EXPECT_EQ(detail->invoice->amount->text, "2.50");
  EXPECT_EQ(detail->invoice->currency_code, "USD");
  EXPECT_EQ(detail->transactions.at(0).amount->text, "2.50");
  EXPECT_EQ(detail->arrived_date->at, at("2026-03-08T11:00:00Z"));
  EXPECT_FALSE(detail->cancelled_date.has_value());
  EXPECT_FALSE(detail->store_order_id.has_value());
  EXPECT_EQ(detail->shipment_tracking_number, "9400111899223344556677");
  ASSERT_EQ(detail->status_history.size(), 3u);
  EXPECT_EQ(detail->status_history[2].status, "Completed");
  const ReturnLine& line = detail->inventory.at(0);
  EXPECT_EQ(line.sku, "BW-001");
  EXPECT_EQ(line.lot_information->number, "LOT-2026-A");
  EXPECT_EQ(line.lot_information->minimum_shelf_life, 90);
  ASSERT_EQ(line.action_taken.size(), 1u);
  EXPECT_EQ(line.action_taken[0].quantity_processed, 1);
  // `action_taken[].image_url` appears from 2026-01.
  EXPECT_EQ(line.action_taken[0].image_url.has_value(), GetParam() != ApiVersion::v2025_07);
}

TEST_P(ResourceDecoding, ReturnList) {
  const auto list = decode<ReturnList>(recorded_body(GetParam(), "return_list.json"), GetParam());
  ASSERT_TRUE(list) << list.error().to_string();
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[1].status, "Cancelled");
  EXPECT_EQ(list->items[1].return_type, "ReturnToSender");
  EXPECT_TRUE(list->items[1].inventory.empty());
  EXPECT_EQ(list->next, fmt::format("/{}/return?Cursor=3&Limit=2", to_string(GetParam())));
  EXPECT_FALSE(list->prev.has_value());
}

TEST_P(ResourceDecoding, LotLevelsWithLocations) {
  const auto levels = decode<LotLevels>(recorded_body(GetParam(), "lot_levels.json"), GetParam());
  ASSERT_TRUE(levels) << levels.error().to_string();
  EXPECT_EQ(levels->inventory_id, 9001);
  ASSERT_EQ(levels->lots.size(), 2u);
  const Lot& lot = levels->lots[0];
  EXPECT_EQ(lot.lot_number, "LOT-2026-A");
  EXPECT_EQ(lot.lot_date->at, at("2026-01-15"));
  EXPECT_EQ(lot.quantities.on_hand_quantity, 20);
  EXPECT_EQ(lot.quantities.fulfillable_quantity, 15);
  ASSERT_EQ(lot.locations.size(), 2u);
  EXPECT_EQ(lot.locations[1].location_id, 3);
  EXPECT_EQ(lot.locations[1].quantities.on_hand_quantity, 8);
  EXPECT_FALSE(levels->lots[1].lot_date.has_value());
  EXPECT_EQ(levels->lots[1].quantities.awaiting_quantity, 100);
}

TEST_P(ResourceDecoding, InventoryItem) {
  const auto item = decode<InventoryItem>(recorded_body(GetParam(), "inventory_item.json"), GetParam());
  ASSERT_TRUE(item) << item.error().to_string();
  EXPECT_EQ(item->inventory_id, 9001);
  EXPECT_EQ(item->is_lot, true);
  EXPECT_EQ(item->variant->is_hazmat, false);
  EXPECT_EQ(item->variant->hazmat_validated, true);
  EXPECT_DOUBLE_EQ(*item->dimensions->length, 10.5);
  EXPECT_DOUBLE_EQ(*item->weight->value, 11.2);
}

TEST_P(ResourceDecoding, VariantCustomsValueIsIntegerBefore2026_07AndDecimalFrom) {
  const auto variants = decode<VariantList>(recorded_body(GetParam(), "variant_list.json"), GetParam());
  ASSERT_TRUE(variants) << variants.error().to_string();
  const auto& customs = variants->at(0).customs;
  ASSERT_TRUE(customs && customs->value);
  EXPECT_EQ(customs->value->text, GetParam() == ApiVersion::v2026_07 ? "12.75" : "12");
  EXPECT_EQ(customs->hs_tariff_code, "3926.90");
}

TEST_P(ResourceDecoding, ChannelList) {
  const auto channels = decode<ChannelList>(recorded_body(GetParam(), "channel_list.json"), GetParam());
  ASSERT_TRUE(channels) << channels.error().to_string();
  ASSERT_EQ(channels->items.size(), 2u);
  EXPECT_FALSE(channels->items[0].has_scope("orders_write"));
  EXPECT_TRUE(channels->items[1].has_scope("orders_write"));
  EXPECT_EQ(channels->items[1].id, 4321);
  EXPECT_TRUE(channels->next.has_value());
  EXPECT_FALSE(channels->prev.has_value());
}

TEST_P(ResourceDecoding, ReceivingOrder) {
  const auto wro = decode<ReceivingOrder>(recorded_body(GetParam(), "receiving_order.json"), GetParam());
  ASSERT_TRUE(wro) << wro.error().to_string();
  EXPECT_EQ(wro->id, 8001);
  EXPECT_EQ(wro->status, "PartiallyArrived");
  EXPECT_FALSE(wro->external_sync_timestamp.has_value());
  EXPECT_EQ(wro->fulfillment_center->timezone, "Central Standard Time");
  EXPECT_EQ(wro->inventory_quantities.at(0).received_quantity, 40);
  EXPECT_EQ(wro->status_history.size(), 2u);
  // `freight` appears from 2026-07.
  EXPECT_EQ(wro->freight.has_value(), GetParam() == ApiVersion::v2026_07);
  if (wro->freight) {
    EXPECT_EQ(wro->freight->container_number, "MSKU1234567");
  }
}

INSTANTIATE_TEST_SUITE_P(AllVersions, ResourceDecoding, ::testing::ValuesIn(testing_bodies::kAllVersions),
                         testing_bodies::VersionName());

}  // namespace
}  // namespace fulfillsync::api
