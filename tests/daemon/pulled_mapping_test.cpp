// From the provider's models to the merchant's result records: the pull jobs' mapping, built from
// model values directly so each field's way is visible.
#include "fulfillsync/daemon/mapping/pulled_mapping.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fulfillsync::daemon {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

timestamps::TimePoint at(std::string_view iso) { return *timestamps::parse_iso8601(iso); }
api::DateTime dt(std::string_view iso) { return api::DateTime{at(iso)}; }

// A shipment carrying everything the mapping reads.
api::Shipment full_shipment() {
  api::Shipment shipment;
  shipment.id = 700800900;
  shipment.status = "Completed";
  shipment.last_update_at = dt("2026-03-01T12:34:56.789+00:00");
  shipment.order_id = 100200300;
  shipment.created_date = dt("2026-03-01T08:00:00Z");
  shipment.actual_fulfillment_date = dt("2026-03-01T10:00:00.250-02:00");  // offset applied
  shipment.estimated_fulfillment_date = dt("2026-03-02T00:00:00Z");
  shipment.last_tracking_update_at = dt("2026-03-01T18:30:00.5Z");
  shipment.invoice_amount = api::Money{"12.30"};
  shipment.invoice_currency_code = "USD";
  shipment.is_tracking_uploaded = true;
  shipment.location = api::IdName{.id = 7, .name = "Twin Lakes (WI)"};
  shipment.ship_option = "Standard";
  shipment.status_details = {
      api::ShipmentStatusDetail{.id = 100, .name = "Processing"},
      api::ShipmentStatusDetail{.id = 201, .name = "InTransit", .description = "on its way"},
  };
  shipment.tracking = api::Tracking{.tracking_number = "9400111899223344556677",
                                    .tracking_url = "https://tools.usps.com/t/9400111899223344556677",
                                    .carrier = "USPS",
                                    .carrier_service = "Ground Advantage",
                                    .scac = "USPS",
                                    .shipping_date = dt("2026-03-01T18:20:00Z")};
  api::ShipmentProduct lotted{.id = 11, .name = "Vitamin C", .reference_id = "vit-c", .sku = "VIT-C-60"};
  lotted.inventory_items = {
      api::ShipmentInventoryItem{.id = 2001,
                                 .name = "Vitamin C 60",
                                 .lot = "LOT-A",
                                 .expiration_date = dt("2027-01-31T00:00:00Z"),
                                 .quantity = 2,
                                 .quantity_committed = 2,
                                 .serial_numbers = {"SN-1", "SN-2"}},
      api::ShipmentInventoryItem{.id = 2002, .lot = "LOT-B", .quantity = 1},
  };
  api::ShipmentProduct plain{.id = 12, .name = "Gift card", .reference_id = "gift", .sku = "GIFT"};
  shipment.products = {lotted, plain};
  return shipment;
}

api::Order order_with(std::vector<api::Shipment> shipments) {
  api::Order order;
  order.id = 100200300;
  order.reference_id = "shop-1001";
  order.status = "PartiallyFulfilled";
  order.created_date = dt("2026-03-01T07:00:00Z");
  order.shipments = std::move(shipments);
  return order;
}

TEST(ShipmentsOfTest, EveryFieldOfAShipmentIsMapped) {
  api::Shipment second;
  second.id = 700800901;
  second.status = "Processing";
  second.last_update_at = dt("2026-03-01T13:00:00Z");
  // No order id of its own: the order's.
  const auto records = shipments_of(order_with({full_shipment(), second}));
  ASSERT_EQ(records.size(), 2u);

  const merchant::ShipmentRecord& first = records[0];
  EXPECT_EQ(first.shipment_id, 700800900);
  EXPECT_EQ(first.order_id, 100200300);
  EXPECT_EQ(first.order_reference_id, "shop-1001");
  EXPECT_EQ(first.status, "Completed");
  EXPECT_EQ(first.status_detail_id, 201);  // the last detail is the latest
  EXPECT_EQ(first.status_detail_name, "InTransit");
  EXPECT_EQ(first.location_id, 7);
  EXPECT_EQ(first.location_name, "Twin Lakes (WI)");
  EXPECT_EQ(first.ship_option, "Standard");
  EXPECT_EQ(first.created_date, "2026-03-01T08:00:00.000Z");
  EXPECT_EQ(first.actual_fulfillment_date, "2026-03-01T12:00:00.250Z");
  EXPECT_EQ(first.estimated_fulfillment_date, "2026-03-02T00:00:00.000Z");
  EXPECT_EQ(first.delivery_date, std::nullopt);
  EXPECT_EQ(first.last_update_at, "2026-03-01T12:34:56.789Z");
  EXPECT_EQ(first.invoice_amount, "12.30");  // exact text, trailing zero kept
  EXPECT_EQ(first.invoice_currency_code, "USD");
  EXPECT_TRUE(first.is_tracking_uploaded);
  ASSERT_TRUE(first.tracking);
  EXPECT_EQ(*first.tracking,
            (merchant::TrackingRecord{.tracking_number = "9400111899223344556677",
                                      .carrier = "USPS",
                                      .carrier_service = "Ground Advantage",
                                      .tracking_url = "https://tools.usps.com/t/9400111899223344556677",
                                      .scac = "USPS",
                                      .bol = std::nullopt,
                                      .pro_number = std::nullopt,
                                      .shipping_date = "2026-03-01T18:20:00.000Z",
                                      .last_tracking_update_at = "2026-03-01T18:30:00.500Z"}));

  const merchant::ShipmentRecord& other = records[1];
  EXPECT_EQ(other.shipment_id, 700800901);
  EXPECT_EQ(other.order_id, 100200300);
  EXPECT_EQ(other.order_reference_id, "shop-1001");
  EXPECT_EQ(other.status, "Processing");
  EXPECT_EQ(other.last_update_at, "2026-03-01T13:00:00.000Z");
  EXPECT_EQ(other.status_detail_id, std::nullopt);
  EXPECT_EQ(other.status_detail_name, std::nullopt);
  EXPECT_EQ(other.location_id, std::nullopt);
  EXPECT_EQ(other.location_name, std::nullopt);
  EXPECT_EQ(other.created_date, std::nullopt);
  EXPECT_EQ(other.invoice_amount, std::nullopt);
  EXPECT_FALSE(other.is_tracking_uploaded);  // absent: not uploaded
  EXPECT_EQ(other.tracking, std::nullopt);
  EXPECT_TRUE(other.items.empty());
}

TEST(ShipmentsOfTest, AShipmentsOwnOrderIdWins) {
  api::Shipment shipment = full_shipment();
  shipment.order_id = 555;
  EXPECT_EQ(shipments_of(order_with({shipment})).at(0).order_id, 555);
}

TEST(ShipmentsOfTest, EachInventoryItemIsALineAndAProductWithoutThemIsOne) {
  const auto records = shipments_of(order_with({full_shipment()}));
  ASSERT_EQ(records.size(), 1u);
  const auto& items = records[0].items;
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0], (merchant::ShipmentItemRecord{.line_number = 1,
                                                    .product_id = 11,
                                                    .product_reference_id = "vit-c",
                                                    .sku = "VIT-C-60",
                                                    .product_name = "Vitamin C",
                                                    .inventory_id = 2001,
                                                    .lot = "LOT-A",
                                                    .expiration_date = "2027-01-31T00:00:00.000Z",
                                                    .quantity = 2,
                                                    .quantity_committed = 2,
                                                    .serial_numbers = {"SN-1", "SN-2"}}));
  EXPECT_EQ(items[1], (merchant::ShipmentItemRecord{.line_number = 2,
                                                    .product_id = 11,
                                                    .product_reference_id = "vit-c",
                                                    .sku = "VIT-C-60",
                                                    .product_name = "Vitamin C",
                                                    .inventory_id = 2002,
                                                    .lot = "LOT-B",
                                                    .expiration_date = std::nullopt,
                                                    .quantity = 1,
                                                    .quantity_committed = std::nullopt,
                                                    .serial_numbers = {}}));
  EXPECT_EQ(items[2], (merchant::ShipmentItemRecord{.line_number = 3,
                                                    .product_id = 12,
                                                    .product_reference_id = "gift",
                                                    .sku = "GIFT",
                                                    .product_name = "Gift card"}));
}

TEST(ShipmentsOfTest, AProductWithoutInventoryItemsFirstStillCountsLinesFromOne) {
  api::Shipment shipment = full_shipment();
  std::swap(shipment.products[0], shipment.products[1]);
  const auto items = shipments_of(order_with({shipment})).at(0).items;
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].line_number, 1);
  EXPECT_EQ(items[0].sku, "GIFT");
  EXPECT_EQ(items[0].inventory_id, std::nullopt);
  EXPECT_EQ(items[1].line_number, 2);
  EXPECT_EQ(items[1].inventory_id, 2001);
  EXPECT_EQ(items[2].line_number, 3);
  EXPECT_EQ(items[2].inventory_id, 2002);
}

TEST(ShipmentsOfTest, TrackingWithoutANumberIsNoTracking) {
  api::Shipment absent = full_shipment();
  absent.tracking.reset();
  api::Shipment empty = full_shipment();
  empty.id = 2;
  empty.tracking->tracking_number = "";
  api::Shipment null_number = full_shipment();
  null_number.id = 3;
  null_number.tracking->tracking_number.reset();
  api::Shipment bare = full_shipment();
  bare.id = 4;
  bare.tracking = api::Tracking{.tracking_number = "1Z999"};
  bare.last_tracking_update_at.reset();

  const auto records = shipments_of(order_with({absent, empty, null_number, bare}));
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].tracking, std::nullopt);
  EXPECT_EQ(records[1].tracking, std::nullopt);
  EXPECT_EQ(records[2].tracking, std::nullopt);
  ASSERT_TRUE(records[3].tracking);
  EXPECT_EQ(*records[3].tracking, merchant::TrackingRecord{.tracking_number = "1Z999"});
}

TEST(LastChangeOfTest, TheLatestOfCreationAndShipmentUpdates) {
  api::Shipment early;
  early.last_update_at = dt("2026-03-01T09:00:00Z");
  api::Shipment late;
  late.last_update_at = dt("2026-03-02T09:00:00.123Z");

  api::Order order = order_with({early, late, early});
  EXPECT_EQ(last_change_of(order), at("2026-03-02T09:00:00.123Z"));

  order.created_date = dt("2026-03-03T00:00:00Z");  // created after its shipments' updates (clock skew)
  EXPECT_EQ(last_change_of(order), at("2026-03-03T00:00:00Z"));

  order.shipments.clear();
  EXPECT_EQ(last_change_of(order), at("2026-03-03T00:00:00Z"));

  order.created_date.reset();
  EXPECT_EQ(last_change_of(order), std::nullopt);

  order.shipments = {early};
  EXPECT_EQ(last_change_of(order), at("2026-03-01T09:00:00Z"));
}

TEST(OrderStatusOfTest, StatusAsOfTheLastChange) {
  const api::Order order = order_with({full_shipment()});
  const auto status = order_status_of(order);
  ASSERT_TRUE(status);
  EXPECT_EQ(*status, (merchant::OrderStatusRecord{.reference_id = "shop-1001",
                                                  .remote_id = 100200300,
                                                  .status = "PartiallyFulfilled",
                                                  .as_of = "2026-03-01T12:34:56.789Z"}));
}

TEST(OrderStatusOfTest, NothingWithoutAReferenceIdOrADate) {
  api::Order other_channel = order_with({full_shipment()});
  other_channel.reference_id.reset();
  EXPECT_EQ(order_status_of(other_channel), std::nullopt);

  api::Order undated = order_with({});
  undated.created_date.reset();
  EXPECT_EQ(order_status_of(undated), std::nullopt);
}

api::ReturnOrder completed_return() {
  api::ReturnOrder order;
  order.id = 9001;
  order.reference_id = "RMA-1";
  order.status = "Completed";
  order.insert_date = dt("2026-03-01T00:00:00Z");
  order.awaiting_arrival_date = dt("2026-03-01T00:00:01Z");
  order.arrived_date = dt("2026-03-02T10:00:00Z");
  order.processing_date = dt("2026-03-03T10:00:00Z");
  order.completed_date = dt("2026-03-04T10:00:00Z");
  order.status_history = {
      api::ReturnStatusChange{.status = "Arrived", .timestamp = dt("2026-03-02T10:00:00Z")},
      api::ReturnStatusChange{.status = "Processing", .timestamp = dt("2026-03-03T10:00:00Z")},
      api::ReturnStatusChange{.status = "Completed", .timestamp = dt("2026-03-04T10:00:00.5Z")},
  };
  api::ReturnLine restocked{.id = 7002, .quantity = 3, .sku = "VIT-C-60"};
  restocked.action_taken = {
      api::ReturnActionTaken{.action = "Restock", .action_reason = "Good", .quantity_processed = 2},
      api::ReturnActionTaken{.action = "Dispose", .quantity_processed = 1},
  };
  api::ReturnLine pending{.id = 7003, .quantity = 1};  // nothing done with it yet
  order.inventory = {restocked, pending};
  return order;
}

TEST(ReturnStatusOfTest, DatesHistoryAndActionsAreMapped) {
  const auto record = return_status_of(completed_return());
  ASSERT_TRUE(record);
  EXPECT_EQ(record->reference_id, "RMA-1");
  EXPECT_EQ(record->remote_id, 9001);
  EXPECT_EQ(record->status, "Completed");
  EXPECT_EQ(record->as_of, "2026-03-04T10:00:00.500Z");  // the history's last change, after completed_date
  EXPECT_EQ(record->arrived_at, "2026-03-02T10:00:00.000Z");
  EXPECT_EQ(record->processing_at, "2026-03-03T10:00:00.000Z");
  EXPECT_EQ(record->completed_at, "2026-03-04T10:00:00.000Z");
  EXPECT_EQ(record->cancelled_at, std::nullopt);
  EXPECT_EQ(record->status_history_json,
            R"([{"status":"Arrived","timestamp":"2026-03-02T10:00:00.000Z"},)"
            R"({"status":"Processing","timestamp":"2026-03-03T10:00:00.000Z"},)"
            R"({"status":"Completed","timestamp":"2026-03-04T10:00:00.500Z"}])");
  EXPECT_EQ(record->actions_taken_json,
            R"([{"inventory_id":7002,"sku":"VIT-C-60","action":"Restock","action_reason":"Good",)"
            R"("quantity_processed":2},)"
            R"({"inventory_id":7002,"sku":"VIT-C-60","action":"Dispose","action_reason":null,)"
            R"("quantity_processed":1}])");
}

TEST(ReturnStatusOfTest, AsOfIsTheLatestOfItsDates) {
  api::ReturnOrder order = completed_return();
  order.status_history.clear();
  EXPECT_EQ(return_status_of(order)->as_of, "2026-03-04T10:00:00.000Z");  // completed_date
  EXPECT_EQ(return_status_of(order)->status_history_json, "[]");

  order.status = "Cancelled";
  order.cancelled_date = dt("2026-03-05T00:00:00Z");
  EXPECT_EQ(return_status_of(order)->as_of, "2026-03-05T00:00:00.000Z");
  EXPECT_EQ(return_status_of(order)->cancelled_at, "2026-03-05T00:00:00.000Z");

  api::ReturnOrder fresh;  // just created: only its insert date
  fresh.id = 1;
  fresh.reference_id = "RMA-2";
  fresh.status = "AwaitingArrival";
  fresh.insert_date = dt("2026-03-01T00:00:00Z");
  const auto record = return_status_of(fresh);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->as_of, "2026-03-01T00:00:00.000Z");
  EXPECT_EQ(record->arrived_at, std::nullopt);
  EXPECT_EQ(record->status_history_json, "[]");
  EXPECT_EQ(record->actions_taken_json, "[]");
}

TEST(ReturnStatusOfTest, AHistoryEntryWithoutValuesIsKeptAsNulls) {
  api::ReturnOrder order = completed_return();
  order.status_history = {api::ReturnStatusChange{}};
  order.inventory.clear();
  const auto record = return_status_of(order);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->status_history_json, R"([{"status":null,"timestamp":null}])");
  EXPECT_EQ(record->as_of, "2026-03-04T10:00:00.000Z");
}

TEST(ReturnStatusOfTest, NothingWithoutAReferenceId) {
  api::ReturnOrder order = completed_return();
  order.reference_id.reset();
  EXPECT_EQ(return_status_of(order), std::nullopt);
}

api::LotQuantities quantities(std::int64_t awaiting, std::int64_t committed, std::int64_t fulfillable,
                              std::int64_t internal_transfer, std::int64_t on_hand) {
  return {.awaiting_quantity = awaiting,
          .committed_quantity = committed,
          .fulfillable_quantity = fulfillable,
          .internal_transfer_quantity = internal_transfer,
          .on_hand_quantity = on_hand};
}

TEST(LotsOfTest, OneRowPerLotAndLocation) {
  api::LotLevels levels{.inventory_id = 7002, .name = "Vitamin C 60", .sku = "VIT-C-60"};
  levels.lots = {
      api::Lot{.lot_number = "L1",
               .lot_date = dt("2027-01-31T00:00:00Z"),
               .quantities = quantities(9, 9, 9, 9, 9),  // the lot's totals: the locations' figures are kept
               .locations = {api::LotLocation{.location_id = 2,
                                              .name = "Reno (NV)",
                                              .quantities = quantities(1, 2, 3, 4, 5)},
                             api::LotLocation{.location_id = 1, .name = "Twin Lakes (WI)",
                                              .quantities = quantities(0, 1, 6, 0, 7)}}},
      api::Lot{.lot_number = "L0", .quantities = {.fulfillable_quantity = 4, .on_hand_quantity = 4}},
  };
  const auto records = lots_of(levels);
  EXPECT_THAT(records,
              UnorderedElementsAre(
                  merchant::LotRecord{.lot_number = "L1",
                                      .lot_date = "2027-01-31T00:00:00.000Z",
                                      .location_id = 2,
                                      .location_name = "Reno (NV)",
                                      .quantities = {.awaiting = 1,
                                                     .committed = 2,
                                                     .fulfillable = 3,
                                                     .internal_transfer = 4,
                                                     .on_hand = 5}},
                  merchant::LotRecord{.lot_number = "L1",
                                      .lot_date = "2027-01-31T00:00:00.000Z",
                                      .location_id = 1,
                                      .location_name = "Twin Lakes (WI)",
                                      .quantities = {.awaiting = 0,
                                                     .committed = 1,
                                                     .fulfillable = 6,
                                                     .internal_transfer = 0,
                                                     .on_hand = 7}},
                  // Held nowhere in particular: location 0, its missing figures 0.
                  merchant::LotRecord{.lot_number = "L0",
                                      .lot_date = std::nullopt,
                                      .location_id = 0,
                                      .location_name = std::nullopt,
                                      .quantities = {.fulfillable = 4, .on_hand = 4}}));
}

TEST(LotsOfTest, StockWithoutLotsAndLocationsWithoutIds) {
  api::LotLevels levels{.inventory_id = 7003};
  levels.lots = {api::Lot{.locations = {api::LotLocation{.quantities = {.on_hand_quantity = 3}}}}};
  EXPECT_THAT(lots_of(levels), ElementsAre(merchant::LotRecord{.lot_number = "",
                                                               .location_id = 0,
                                                               .quantities = {.on_hand = 3}}));
  EXPECT_TRUE(lots_of(api::LotLevels{.inventory_id = 7004}).empty());
}

TEST(LotsOfTest, ALotListedTwiceIsOneRowTheFirstListed) {
  api::LotLevels levels{.inventory_id = 7002};
  levels.lots = {
      api::Lot{.lot_number = "L1",
               .locations = {api::LotLocation{.location_id = 1, .quantities = {.on_hand_quantity = 5}},
                             api::LotLocation{.location_id = 2, .quantities = {.on_hand_quantity = 6}}}},
      api::Lot{.lot_number = "L2",
               .locations = {api::LotLocation{.location_id = 1, .quantities = {.on_hand_quantity = 1}}}},
      api::Lot{.lot_number = "L1",
               .locations = {api::LotLocation{.location_id = 1, .quantities = {.on_hand_quantity = 50}}}},
      api::Lot{.lot_number = "L3", .quantities = {.on_hand_quantity = 2}},
      api::Lot{.lot_number = "L3", .quantities = {.on_hand_quantity = 20}},
  };
  EXPECT_THAT(lots_of(levels),
              UnorderedElementsAre(
                  merchant::LotRecord{.lot_number = "L1", .location_id = 1, .quantities = {.on_hand = 5}},
                  merchant::LotRecord{.lot_number = "L1", .location_id = 2, .quantities = {.on_hand = 6}},
                  merchant::LotRecord{.lot_number = "L2", .location_id = 1, .quantities = {.on_hand = 1}},
                  merchant::LotRecord{.lot_number = "L3", .location_id = 0, .quantities = {.on_hand = 2}}));
}

TEST(TimelineOfTest, EntriesWithTheirMetadataInBodyOrder) {
  api::ShipmentTimeline timeline = {
      api::TimelineEntry{.timestamp = dt("2026-03-01T10:00:00Z"),
                         .log_type_id = 601,
                         .log_type_name = "Shipped",
                         .log_type_text = "Your order has shipped",
                         .metadata = {{"zeta", "1"}, {"alpha", "say \"hi\"\n"}, {"Müller", "Zoë"}}},
      api::TimelineEntry{.timestamp = dt("2026-03-01T09:00:00.042Z")},
  };
  const auto records = timeline_of(timeline);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0], (merchant::TimelineEntryRecord{.timestamp = "2026-03-01T10:00:00.000Z",
                                                       .log_type_id = 601,
                                                       .log_type_name = "Shipped",
                                                       .log_type_text = "Your order has shipped",
                                                       .metadata_json = R"({"zeta":"1","alpha":"say \"hi\"\n",)"
                                                                        R"("Müller":"Zoë"})"}));
  // Kept in the provider's order, not sorted.
  EXPECT_EQ(records[1], (merchant::TimelineEntryRecord{.timestamp = "2026-03-01T09:00:00.042Z"}));
  EXPECT_EQ(records[1].metadata_json, "{}");
  EXPECT_TRUE(timeline_of({}).empty());
}

}  // namespace
}  // namespace fulfillsync::daemon
