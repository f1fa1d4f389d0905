// PostgresMerchantDatabase and its PulledTables against a real PostgreSQL 15 server: the same rules
// as SQLite's (sqlite_merchant_database_test.cpp, PulledRecordsTest), written by the same code
// (result_pulled_tables.cpp) with PostgreSQL's statements.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fulfillsync/merchant/postgres_merchant_database.hpp"
#include "fulfillsync/merchant/sqlite_check.hpp"
#include "postgres_fixture.hpp"
#include "postgres_pulled_tables.hpp"

namespace fulfillsync::merchant {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class PostgresPulledTablesTest : public PostgresMerchantTest {
 protected:
  void SetUp() override {
    PostgresMerchantTest::SetUp();
    if (IsSkipped()) return;
    db = std::make_unique<PostgresMerchantDatabase>(config());
    const auto t0 = timestamps::parse_iso8601("2026-03-01T10:00:00Z").value();
    db->results().write_results(SourceKind::orders,
                                std::vector<SyncResult>{{.reference_id = "O-1", .state = "created", .remote_id = 101,
                                                         .remote_status = "Processing", .updated_at = t0}});
  }

  static ShipmentRecord shipment(std::int64_t id, std::string last_update_at, std::string status = "Processing") {
    return {.shipment_id = id,
            .order_id = 101,
            .order_reference_id = "O-1",
            .status = std::move(status),
            .location_id = 8,
            .last_update_at = std::move(last_update_at),
            .invoice_amount = "12.30",
            .tracking = TrackingRecord{.tracking_number = "1Z999", .carrier = "UPS"},
            .items = {{.line_number = 1, .product_reference_id = "TSHIRT-M", .quantity = 2,
                       .serial_numbers = {"SN-1", "SN \"2\""}},
                      {.line_number = 2, .product_reference_id = "MUG", .quantity = 1}}};
  }

  std::string one(const std::string& sql) { return app->exec(sql); }

  std::unique_ptr<PostgresMerchantDatabase> db;
  const std::string t1 = "2026-03-02T10:00:00.000Z", t2 = "2026-03-02T11:00:00.000Z", t3 = "2026-03-02T12:00:00.000Z";
};

TEST_F(PostgresPulledTablesTest, OpensMigratedAndSaysWhatItIs) {
  EXPECT_EQ(db->result_schema_version(), 4);
  EXPECT_THAT(db->describe(), HasSubstr("postgresql host="));
  EXPECT_THAT(db->describe(), HasSubstr("dbname=" + database_));
  db->ping();
}

TEST_F(PostgresPulledTablesTest, ShipmentsItemsAndTrackingNeverOlderOverNewer) {
  const std::vector<OrderStatusRecord> orders = {{.reference_id = "O-1", .remote_id = 101, .status = "Fulfilled", .as_of = t2}};
  db->pulled().write_shipments(orders, std::vector{shipment(5001, t2)});
  db->pulled().write_shipments(orders, std::vector{shipment(5001, t2)});  // a replay changes nothing
  EXPECT_EQ(one("SELECT status || '|' || last_update_at || '|' || invoice_amount || '|' || is_tracking_uploaded "
                "FROM fulfillsync.fulfillsync_shipments"),
            "Processing|2026-03-02T11:00:00.000Z|12.30|false");
  EXPECT_EQ(one("SELECT count(*) FROM fulfillsync.fulfillsync_shipment_items"), "2");
  EXPECT_EQ(one("SELECT serial_numbers FROM fulfillsync.fulfillsync_shipment_items WHERE line_number = 1"),
            R"(["SN-1","SN \"2\""])");
  EXPECT_EQ(one("SELECT remote_status || '|' || remote_updated_at FROM fulfillsync.fulfillsync_order_sync"),
            "Fulfilled|2026-03-02T11:00:00.000Z");

  // Older: nothing changes, not even the order's status.
  auto older = shipment(5001, t1, "None");
  older.items.resize(1);
  older.tracking->tracking_number = "OLD";
  db->pulled().write_shipments(
      std::vector<OrderStatusRecord>{{.reference_id = "O-1", .remote_id = 101, .status = "Processing", .as_of = t1}},
      std::vector{older});
  EXPECT_EQ(one("SELECT status FROM fulfillsync.fulfillsync_shipments"), "Processing");
  EXPECT_EQ(one("SELECT count(*) FROM fulfillsync.fulfillsync_shipment_items"), "2");
  EXPECT_EQ(one("SELECT tracking_number FROM fulfillsync.fulfillsync_tracking"), "1Z999");
  EXPECT_EQ(one("SELECT remote_status FROM fulfillsync.fulfillsync_order_sync"), "Fulfilled");

  // The merchant acknowledges the tracking; a new number needs a new acknowledgement.
  app->exec("UPDATE fulfillsync.fulfillsync_tracking SET acknowledged_at = '2026-03-02T11:30:00.000Z'");
  auto renumbered = shipment(5001, t3, "Completed");
  renumbered.is_tracking_uploaded = true;
  renumbered.tracking->tracking_number = "1Z000";
  renumbered.items = {{.line_number = 1, .product_reference_id = "HAT", .quantity = 3}};
  db->pulled().write_shipments({}, std::vector{renumbered});
  EXPECT_EQ(one("SELECT status || '|' || is_tracking_uploaded FROM fulfillsync.fulfillsync_shipments"), "Completed|true");
  EXPECT_EQ(one("SELECT string_agg(product_reference_id, ',') FROM fulfillsync.fulfillsync_shipment_items"), "HAT");
  EXPECT_EQ(one("SELECT tracking_number || '|' || (acknowledged_at IS NULL) || '|' || (upload_marked_at IS NOT NULL) "
                "FROM fulfillsync.fulfillsync_tracking"),
            "1Z000|true|true");
}

TEST_F(PostgresPulledTablesTest, WritingShipmentsIsOneTransaction) {
  auto broken = shipment(5002, t1);
  broken.items.push_back(broken.items.front());  // the same line twice
  EXPECT_THROW(db->pulled().write_shipments(std::vector<OrderStatusRecord>{{.reference_id = "O-1", .status = "Fulfilled",
                                                                             .as_of = t1}},
                                            std::vector{shipment(5001, t1), broken}),
               MerchantDatabaseError);
  EXPECT_EQ(one("SELECT count(*) FROM fulfillsync.fulfillsync_shipments"), "0");
  EXPECT_EQ(one("SELECT remote_status || '|' || (remote_updated_at IS NULL) FROM fulfillsync.fulfillsync_order_sync"),
            "Processing|true");
}

// A page of shipments costs three round trips however many it holds: BEGIN; the order statuses
// with every shipment's upsert, whose counts say which are newer; and their items, tracking and
// deletes with COMMIT. Only the shipments written get their items and tracking replaced, also when
// the page names one twice.
TEST_F(PostgresPulledTablesTest, ShipmentWritesGoInThreeRoundTripsAPage) {
  auto pulled = make_postgres_pulled_tables(*connection);
  auto held = shipment(6001, t2);
  held.items = {{.line_number = 1, .product_reference_id = "HAT", .quantity = 1}};
  pulled->write_shipments({}, std::vector{held});

  std::vector<ShipmentRecord> shipments;
  shipments.push_back(shipment(6001, t1));  // older than the one held: its items are not written
  for (std::int64_t id = 6002; id <= 6020; ++id) shipments.push_back(shipment(id, t1));
  auto newer = shipment(6020, t2);  // the page names 6020 again, newer
  newer.items = {{.line_number = 1, .product_reference_id = "SCARF", .quantity = 4}};
  shipments.push_back(newer);
  auto older = shipment(6020, t1);  // and then older
  older.tracking->tracking_number = "OLD";
  shipments.push_back(older);
  shipments.back().is_tracking_uploaded = true;
  shipments[5].is_tracking_uploaded = true;
  const std::uint64_t before = connection->round_trips();
  pulled->write_shipments(std::vector<OrderStatusRecord>{{.reference_id = "O-1", .status = "Fulfilled", .as_of = t1}},
                          shipments);
  EXPECT_EQ(connection->round_trips() - before, 3U);
  EXPECT_EQ(one("SELECT string_agg(product_reference_id, ',') FROM fulfillsync.fulfillsync_shipment_items "
                "WHERE shipment_id = 6001"),
            "HAT");
  EXPECT_EQ(one("SELECT string_agg(product_reference_id, ',') FROM fulfillsync.fulfillsync_shipment_items "
                "WHERE shipment_id = 6020"),
            "SCARF");
  EXPECT_EQ(one("SELECT tracking_number FROM fulfillsync.fulfillsync_tracking WHERE shipment_id = 6020"), "1Z999");
  EXPECT_EQ(one("SELECT count(*) FROM fulfillsync.fulfillsync_shipment_items"), "38");  // 1 + 18 * 2 + 1
  EXPECT_EQ(one("SELECT count(*) FROM fulfillsync.fulfillsync_tracking WHERE upload_marked_at IS NOT NULL"), "1");
  EXPECT_EQ(one("SELECT remote_status FROM fulfillsync.fulfillsync_order_sync"), "Fulfilled");
}

// An order named several times on a page (statements of many rows: an UPDATE from a list would take
// either of two rows for one order) ends with its newest status, as one after the other would.
TEST_F(PostgresPulledTablesTest, AnOrderNamedAgainOnAPageEndsWithItsNewestStatus) {
  std::vector<OrderStatusRecord> statuses;
  for (const auto& [status, as_of] : {std::pair{"Processing", t2}, {"Fulfilled", t3}, {"Exception", t1}}) {
    for (int i = 0; i < 30; ++i) statuses.push_back({.reference_id = "O-1", .status = status, .as_of = as_of});
  }
  db->pulled().write_shipments(statuses, {});
  EXPECT_EQ(one("SELECT remote_status || '|' || remote_updated_at FROM fulfillsync.fulfillsync_order_sync"),
            "Fulfilled|" + t3);
}

TEST_F(PostgresPulledTablesTest, TrackingToMarkPagesAndRecordsMarks) {
  db->pulled().write_shipments({}, std::vector{shipment(5001, t1), shipment(5002, t1), shipment(5003, t1)});
  EXPECT_THAT(db->pulled().tracking_to_mark(0, 2, false),
              ElementsAre(TrackingToMark{5001, 101}, TrackingToMark{5002, 101}));
  EXPECT_THAT(db->pulled().tracking_to_mark(5002, 10, false), ElementsAre(TrackingToMark{5003, 101}));
  EXPECT_THAT(db->pulled().tracking_to_mark(0, 10, true), ElementsAre());
  app->exec("UPDATE fulfillsync.fulfillsync_tracking SET acknowledged_at = 'x' WHERE shipment_id = 5002");
  EXPECT_THAT(db->pulled().tracking_to_mark(0, 10, true), ElementsAre(TrackingToMark{5002, 101}));

  db->pulled().record_tracking_marks(std::vector<TrackingMarkResult>{
      {.shipment_id = 5001, .error = "HTTP 503", .attempts = 1},
      {.shipment_id = 5002, .marked_at = t2, .attempts = 1}});
  EXPECT_EQ(one("SELECT mark_error || '|' || mark_attempts || '|' || (upload_marked_at IS NULL) FROM "
                "fulfillsync.fulfillsync_tracking WHERE shipment_id = 5001"),
            "HTTP 503|1|true");
  db->pulled().record_tracking_marks(std::vector<TrackingMarkResult>{{.shipment_id = 5001, .marked_at = t3, .attempts = 2}});
  EXPECT_EQ(one("SELECT (mark_error IS NULL) || '|' || mark_attempts || '|' || upload_marked_at FROM "
                "fulfillsync.fulfillsync_tracking WHERE shipment_id = 5001"),
            "true|2|2026-03-02T12:00:00.000Z");
  EXPECT_THAT(db->pulled().tracking_to_mark(0, 10, false), ElementsAre(TrackingToMark{5003, 101}));
}

TEST_F(PostgresPulledTablesTest, ReturnStatusesTimelinesAndLots) {
  const auto t0 = timestamps::parse_iso8601("2026-03-01T10:00:00Z").value();
  db->results().write_results(SourceKind::returns,
                              std::vector<SyncResult>{{.reference_id = "R-1", .state = "created", .remote_id = 9,
                                                       .updated_at = t0}});
  db->pulled().write_return_statuses(std::vector<ReturnStatusRecord>{
      {.reference_id = "R-1", .status = "Arrived", .as_of = t2, .arrived_at = t2},
      {.reference_id = "R-unknown", .status = "Arrived", .as_of = t2}});
  db->pulled().write_return_statuses(
      std::vector<ReturnStatusRecord>{{.reference_id = "R-1", .status = "AwaitingArrival", .as_of = t1}});
  EXPECT_EQ(one("SELECT remote_status || '|' || arrived_at FROM fulfillsync.fulfillsync_return_sync"),
            "Arrived|2026-03-02T11:00:00.000Z");
  EXPECT_EQ(one("SELECT count(*) FROM fulfillsync.fulfillsync_return_sync"), "1");

  db->pulled().write_timeline(5001, std::vector<TimelineEntryRecord>{{.timestamp = t1, .log_type_id = 1},
                                                                     {.timestamp = t2, .log_type_name = "InTransit"}});
  db->pulled().write_timeline(5001, std::vector<TimelineEntryRecord>{{.timestamp = t3}});
  EXPECT_EQ(one("SELECT string_agg(seq || ':' || timestamp, ',') FROM fulfillsync.fulfillsync_shipment_timeline"),
            "1:2026-03-02T12:00:00.000Z");

  app->exec("INSERT INTO fulfillsync_watched_inventory VALUES (7001), (7002)");
  EXPECT_THAT(db->pulled().watched_inventory_ids(), ElementsAre(7001, 7002));
  const auto lot = [](std::string number, std::int64_t location, std::int64_t on_hand) {
    return LotRecord{.lot_number = std::move(number), .location_id = location,
                     .quantities = {.committed = 1, .fulfillable = on_hand - 1, .on_hand = on_hand}};
  };
  LotChanges changes = db->pulled().replace_lots(7001, std::vector{lot("A", 8, 5), lot("B", 8, 2)});
  EXPECT_EQ(changes.written, 2);
  changes = db->pulled().replace_lots(7001, std::vector{lot("A", 8, 5), lot("C", 8, 1)});
  EXPECT_EQ(changes.written, 1);
  EXPECT_EQ(changes.removed, 1);
  db->pulled().replace_lots(7002, std::vector{lot("", 9, 4)});
  EXPECT_EQ(db->pulled().remove_lots_except(std::vector<std::int64_t>{7002}), 2);
  EXPECT_EQ(one("SELECT string_agg(inventory_id || ':' || on_hand_quantity, ',') FROM "
                "fulfillsync.fulfillsync_inventory_lots"),
            "7002:4");
}

TEST_F(PostgresPulledTablesTest, ReadOnlyReadsAndRefusesEveryWrite) {
  add_order("A", "2026-03-01T10:00:00Z");
  PostgresMerchantDatabase read_only(config(), PostgresMerchantDatabase::Access::read_only);
  EXPECT_EQ(read_only.source().read_orders(ReadRange{}).size(), 1u);
  EXPECT_TRUE(read_only.results().read_result(SourceKind::orders, "O-1"));
  try {
    read_only.results().write_results(
        SourceKind::orders, std::vector<SyncResult>{{.reference_id = "B", .state = "created",
                                                     .updated_at = timestamps::Clock::now()}});
    ADD_FAILURE() << "wrote through a read-only open";
  } catch (const MerchantDatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("read-only transaction"));
  }
  EXPECT_THROW(read_only.pulled().write_shipments({}, std::vector{shipment(5001, t1)}), MerchantDatabaseError);
  EXPECT_FALSE(db->results().read_result(SourceKind::orders, "B"));
}

// merchant.driver: postgresql opens this database, and check-config reports on it in lines that name
// what is wrong.
TEST_F(PostgresPulledTablesTest, TheDriverOpensItAndCheckConfigNamesWhatIsMissing) {
  EXPECT_THAT(open_merchant_database(config())->describe(), HasSubstr("postgresql host="));
  EXPECT_THAT(open_merchant_database_read_only(config())->describe(), HasSubstr("postgresql host="));

  const auto lines = [](const std::vector<Finding>& findings) {
    std::vector<std::string> out;
    for (const auto& finding : findings) {
      const char* level = finding.level == Finding::Level::ok ? "ok" : finding.level == Finding::Level::warning ? "warning" : "error";
      out.push_back(fmt::format("{} {}: {}", level, finding.subject, finding.message));
    }
    return out;
  };
  using ::testing::StartsWith;
  EXPECT_THAT(lines(check_merchant_database(config())),
              ElementsAre(StartsWith("ok merchant.postgresql: postgresql host="),
                          "ok source tables: every table and column of the contract",
                          StartsWith("warning change detection: no change_xid"),
                          "ok result tables (schema fulfillsync, prefix fulfillsync_): present at schema version 4"));

  source->install_change_log();
  app->exec("DROP TABLE fulfillsync_watched_inventory");
  EXPECT_THAT(lines(check_merchant_database(config())),
              ElementsAre(StartsWith("ok merchant.postgresql"),
                          StartsWith("error source tables: fulfillsync_watched_inventory: no such table or view in "
                                     "schema shop; fix: "),
                          "ok change detection: changes are read by transaction id (change_xid)",
                          StartsWith("ok result tables")));

  auto unreachable = config();
  unreachable.postgresql.connection = "host=127.0.0.1 port=1 dbname=shop connect_timeout=2";
  EXPECT_THAT(lines(check_merchant_database(unreachable)),
              ElementsAre(StartsWith("error merchant.postgresql: merchant database postgresql of "
                                     "merchant.postgresql.connection: cannot connect: ")));
}

}  // namespace
}  // namespace fulfillsync::merchant
