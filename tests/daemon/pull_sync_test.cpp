// The pull jobs and the tracking marks end to end (sync_fixture.hpp): orders pushed, the sandbox
// fulfils them on its clock, and what it knows must arrive in the merchant's result tables, each
// shipment's tracking marked uploaded exactly once and never before the merchant database holds it.
// Every test runs on each merchant database driver (merchant_driver.hpp: SQLite, PostgreSQL).
#include <fmt/chrono.h>
#include <simdjson.h>

#include "merchant_driver.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kTrackingMarksRefused = 65;
// The sandbox's demo catalogue: an inventory item with stock at three centers.
constexpr std::int64_t kWatchedInventory = 7002;

constexpr std::string_view kPullJobs =
    "    pull_shipments: {interval: 50ms, page_size: 100}\n"
    "    mark_tracking: {interval: 50ms, batch_size: 50, batch_wait: 0s}\n"
    "    pull_returns: {interval: 50ms, page_size: 20}\n"
    "    pull_lots: {interval: 1s}\n";

// Marks that wait for a full batch: `batch_wait` is the longest a batch short of 50 waits.
std::string jobs_with_batch_wait(std::string_view batch_wait) {
  return fmt::format("    pull_shipments: {{interval: 50ms, page_size: 100}}\n"
                     "    mark_tracking: {{interval: 50ms, batch_size: 50, batch_wait: {}}}\n"
                     "    pull_returns: {{enabled: false}}\n"
                     "    pull_lots: {{enabled: false}}\n",
                     batch_wait);
}

class PullSyncTest : public DriverFixture {
 protected:
  void start(std::vector<std::string> sandbox_args = {}, std::string_view jobs = kPullJobs) {
    start_sandbox(std::move(sandbox_args));
    write_config("", jobs);
  }

  void advance_clock(long seconds) {
    const auto response = sandbox->admin("POST", fmt::format("/_sandbox/clock/advance?seconds={}", seconds));
    ASSERT_EQ(response.status, 200) << response.body;
  }

  void set_faults(std::string_view spec) {
    const auto response = sandbox->admin("POST", "/_sandbox/faults?seed=7", spec);
    ASSERT_EQ(response.status, 200) << response.body;
  }

  void set_lot(std::int64_t inventory_id, std::string_view lot, int location, int on_hand) {
    const auto response = sandbox->admin(
        "POST", fmt::format("/_sandbox/inventory/{}/lots", inventory_id),
        fmt::format(R"({{"lot_number": "{}", "location_id": {}, "on_hand": {}}})", lot, location, on_hand));
    ASSERT_EQ(response.status, 200) << response.body;
  }

  void watch(std::int64_t inventory_id) {
    execute(fmt::format("INSERT INTO fulfillsync_watched_inventory (inventory_id) VALUES ({})", inventory_id));
  }

  // The merchant's lot rows of an inventory id, "lot@location:on_hand/fulfillable", against the provider's.
  std::set<std::string> merchant_lots(std::int64_t inventory_id) {
    std::set<std::string> lots;
    for (const auto& row : shop_app->query(fmt::format("SELECT lot_number, location_id, on_hand_quantity, "
                                                   "fulfillable_quantity FROM fulfillsync_inventory_lots "
                                                   "WHERE inventory_id = {}",
                                                   inventory_id))) {
      lots.insert(fmt::format("{}@{}:{}/{}", row[0], row[1], row[2], row[3]));
    }
    return lots;
  }
  std::set<std::string> provider_lots(std::int64_t inventory_id) {
    const auto response = api_get(fmt::format("/inventory-level/{}/lots", inventory_id));
    EXPECT_EQ(response.status, 200) << response.body;
    auto levels = api::decode<api::LotLevels>(response.body, api::ApiVersion::v2026_07);
    EXPECT_TRUE(levels.ok());
    std::set<std::string> lots;
    if (!levels) return lots;
    for (const auto& lot : levels->lots) {
      for (const auto& location : lot.locations) {
        lots.insert(fmt::format("{}@{}:{}/{}", lot.lot_number.value_or(""), location.location_id.value_or(0),
                                location.quantities.on_hand_quantity.value_or(0),
                                location.quantities.fulfillable_quantity.value_or(0)));
      }
    }
    return lots;
  }

  // Waits until the count `sql` reaches `at_least`, at most `limit`; whether it did.
  bool wait_for_count(std::string_view sql, long at_least, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (count(sql) < at_least) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(20ms);
    }
    return true;
  }

  // Orders of the daemon's channel made at the sandbox (as if by another sales channel's upload).
  void make_orders(long count) {
    const auto response = sandbox->admin("POST", fmt::format("/_sandbox/orders:bulk?count={}", count));
    ASSERT_EQ(response.status, 201) << response.body;
  }

  // GET /order requests the sandbox answered: with the marks off, the pages of pull_shipments' windows.
  long order_pages() {
    const std::string body = sandbox->admin("GET", "/_sandbox/stats").body;
    simdjson::dom::parser parser;
    long pages = 0;
    for (const simdjson::dom::element entry : parser.parse(body)["requests"].get_array()) {
      if (std::string_view(entry["route"].get_string()) == "GET /order") pages += entry["count"].get_int64();
    }
    return pages;
  }

  // Every shipment the provider has is in the merchant database with its status and tracking.
  void expect_shipments_held(std::size_t expected) {
    const auto provider = sandbox_shipments();
    const auto held = merchant_shipments();
    EXPECT_EQ(provider.size(), expected);
    EXPECT_EQ(held.size(), expected);
    for (const auto& [id, shipment] : provider) {
      const auto it = held.find(id);
      if (it == held.end()) {
        ADD_FAILURE() << "shipment " << id << " is not in the merchant database";
        continue;
      }
      EXPECT_EQ(it->second.status, shipment.status) << id;
      EXPECT_EQ(it->second.tracking_number, shipment.tracking_number) << id;
    }
  }

  // Tracking marks in the checkpoint store in `state`.
  long marks_in_state(std::string_view state) {
    SQLite::Database store((dir / "checkpoint.db").string(), SQLite::OPEN_READONLY);
    SQLite::Statement query(store, "SELECT count(*) FROM tracking_marks WHERE state = ?");
    query.bind(1, std::string(state));
    query.executeStep();
    return query.getColumn(0).getInt64();
  }
};

TEST_P(PullSyncTest, ThousandOrdersShipAndEveryTrackingIsMarkedOnce) {
  start();
  insert_orders("ORD", 1000);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  // Created, not shipped yet: shipments without tracking, nothing to mark.
  EXPECT_EQ(merchant_shipments().size(), 1000u);
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_tracking"), 0);

  advance_clock(400);  // every order shipped, with tracking
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  expect_shipments_synced(1000);
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_tracking WHERE upload_marked_at IS NOT NULL"), 1000);
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_order_sync WHERE remote_status = 'Fulfilled'"), 1000);
  const auto not_uploaded = api_get("/order?HasTracking=true&IsTrackingUploaded=false");
  EXPECT_EQ(not_uploaded.body, "[]");
  // status: the marks, and the figures of the run that made them.
  const auto status = daemon({"status"});
  ASSERT_EQ(status.exit_status, 3) << status.stderr_text;  // no daemon runs once `once` has ended
  EXPECT_THAT(status.stdout_text, HasSubstr("Tracking marks: pending 0 in_flight 0 unknown 0"));
  EXPECT_THAT(status.stdout_text, ::testing::ContainsRegex("mark_tracking +[0-9]+ +0 +1000 "));

  advance_clock(2 * 24 * 3600);  // in transit, out for delivery, delivered
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  expect_shipments_synced(1000);  // still marked once each
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_shipments WHERE status_detail_id = 203 "
                  "AND delivery_date IS NOT NULL"),
            1000);
  EXPECT_THAT(result.stdout_text, HasSubstr("pull_shipments"));
}

TEST_P(PullSyncTest, NothingIsMarkedBeforeTheMerchantDatabaseHoldsTheTracking) {
  start();
  insert_orders("LOCK", 20);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  advance_clock(400);

  // The shop's application holds a lock that keeps the daemon from writing the shipments and their
  // tracking (SQLite: the database's write lock; PostgreSQL: the tables'): the pulled shipments cannot
  // be committed (the daemon waits its busy or statement timeout, then tries again later), so nothing
  // is marked.
  if (on_postgresql()) {
    std::string config = read_file(config_path);
    config.insert(config.find("    source_schema:"), "    statement_timeout: 1s\n");
    write_file(config_path, config);
    execute("BEGIN; LOCK TABLE fulfillsync_shipments, fulfillsync_tracking IN EXCLUSIVE MODE");
  } else {
    execute("BEGIN IMMEDIATE");
  }
  ChildProcess daemon_run({.argv = {binary_path("fulfillsyncd").string(), "--config", config_path.string(), "run"}});
  ASSERT_TRUE(daemon_run.wait_for_stderr("fulfillsyncd ready", 10s)) << daemon_run.stderr_text();
  ASSERT_TRUE(daemon_run.wait_for_stderr(on_postgresql() ? "statement timeout" : "database is locked", 20s))
      << daemon_run.stderr_text();
  std::this_thread::sleep_for(2s);
  for (const auto& [id, shipment] : sandbox_shipments()) {
    EXPECT_FALSE(shipment.tracking_number.empty()) << id;
    EXPECT_EQ(shipment.marks, 0) << "shipment " << id << " was marked while the merchant database could not hold it";
  }
  execute("ROLLBACK");

  // Once the lock is gone, the shipments are written and then marked.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (count("SELECT count(*) FROM fulfillsync_tracking WHERE upload_marked_at IS NOT NULL") < 20 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);
  }
  daemon_run.send_signal(SIGTERM);
  ASSERT_EQ(daemon_run.wait_for_exit(30s), 0) << daemon_run.stderr_text();
  expect_shipments_synced(20);
}

// A trickle: ten shipments at a time reach the merchant database, and the marks go out in full
// batches of 50 rather than one request per ten. Counted in requests, not timed.
TEST_P(PullSyncTest, ATrickleOfShipmentsIsMarkedInFullBatches) {
  start({}, jobs_with_batch_wait("1h"));
  auto running = run_in_background();
  constexpr int kRounds = 10, kPerRound = 10;
  for (int round = 1; round <= kRounds; ++round) {
    insert_orders(fmt::format("TRICKLE{:02}", round), kPerRound);
    ASSERT_TRUE(wait_for_sandbox_count("orders", round * kPerRound, 30s)) << running->stderr_text();
    advance_clock(400);  // shipped, with tracking
    ASSERT_TRUE(wait_for_count("SELECT count(*) FROM fulfillsync_tracking", round * kPerRound, 30s))
        << running->stderr_text();
  }
  EXPECT_TRUE(wait_for_count("SELECT count(*) FROM fulfillsync_tracking WHERE upload_marked_at IS NOT NULL",
                             kRounds * kPerRound, 30s))
      << running->stderr_text();
  EXPECT_EQ(sandbox_count("tracking_upload_requests"), kRounds * kPerRound / 50);
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(30s), 0) << running->stderr_text();
  expect_shipments_synced(kRounds * kPerRound);
}

// The merchant's tracking table refuses the marks' writes (an operator's trigger): the marks are
// sent once, and mark_tracking's runs fail on the merchant database, so `once` ends 69 naming the
// refusal, until the table takes them: then they are written, none sent again.
TEST_P(PullSyncTest, MarksTheTrackingTableRefusesFailTheRunAndAreWrittenOnceItTakesThem) {
  start();
  insert_orders("REFUSED", 3);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  advance_clock(400);  // shipped, with tracking
  if (on_postgresql()) {
    execute("CREATE FUNCTION refuse_marks() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'closed for maintenance'; END $$; "
            "CREATE TRIGGER refuse_marks BEFORE UPDATE OF upload_marked_at ON fulfillsync_tracking "
            "FOR EACH ROW EXECUTE FUNCTION refuse_marks()");
  } else {
    execute("CREATE TRIGGER refuse_marks BEFORE UPDATE OF upload_marked_at ON fulfillsync_tracking "
            "BEGIN SELECT RAISE(ABORT, 'closed for maintenance'); END");
  }
  result = once();
  EXPECT_EQ(result.exit_status, 69) << result.stderr_text;  // EX_UNAVAILABLE
  EXPECT_THAT(result.stderr_text, HasSubstr("mark_tracking failed"));
  EXPECT_THAT(result.stderr_text, HasSubstr("closed for maintenance"));
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_tracking"), 3);
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_tracking WHERE upload_marked_at IS NOT NULL"), 0);
  EXPECT_EQ(sandbox_count("tracking_upload_requests"), 1);

  execute(on_postgresql() ? "DROP TRIGGER refuse_marks ON fulfillsync_tracking" : "DROP TRIGGER refuse_marks");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_tracking WHERE upload_marked_at IS NOT NULL"), 3);
  EXPECT_EQ(sandbox_count("tracking_upload_requests"), 1);
  expect_shipments_synced(3);
}

// A batch that never fills goes once its oldest mark has waited batch_wait.
TEST_P(PullSyncTest, ALoneMarkIsSentOnceBatchWaitHasPassed) {
  start({}, jobs_with_batch_wait("1s"));
  insert_orders("LONE", 1);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  advance_clock(400);
  auto running = run_in_background();
  EXPECT_TRUE(wait_for_count("SELECT count(*) FROM fulfillsync_tracking WHERE upload_marked_at IS NOT NULL", 1, 30s))
      << running->stderr_text();
  EXPECT_EQ(sandbox_count("tracking_upload_requests"), 1);
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(30s), 0) << running->stderr_text();
  expect_shipments_synced(1);
}

// Marks waiting for their batch are in the checkpoint store: a stop loses none, and `once`, which
// never waits, sends them.
TEST_P(PullSyncTest, MarksWaitingForTheirBatchOutliveAStopAndOnceSendsThem) {
  start({}, jobs_with_batch_wait("1h"));
  insert_orders("HELD", 10);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  advance_clock(400);
  auto running = run_in_background();
  ASSERT_TRUE(wait_for_count("SELECT count(*) FROM fulfillsync_tracking", 10, 30s)) << running->stderr_text();
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (marks_in_state("pending") < 10 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  // Held back by design, they are no backlog: the progress report (every second here) says nothing of them.
  std::this_thread::sleep_for(1500ms);
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(30s), 0) << running->stderr_text();
  EXPECT_THAT(running->stderr_text(), Not(HasSubstr("mark_tracking: 10 left"))) << running->stderr_text();
  EXPECT_EQ(marks_in_state("pending"), 10);
  EXPECT_EQ(sandbox_count("tracking_upload_requests"), 0);

  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(sandbox_count("tracking_upload_requests"), 1);
  expect_shipments_synced(10);
}

TEST_P(PullSyncTest, TimelinesOfChangedShipmentsAreKept) {
  start({}, "    pull_shipments: {interval: 50ms, timelines: true}\n    mark_tracking: {interval: 50ms}\n");
  insert_orders("TL", 5);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  advance_clock(2 * 3600);  // shipped and in transit
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;

  int checked = 0;
  for (const auto& shipment : shop_app->query("SELECT shipment_id, order_id FROM fulfillsync_shipments")) {
    const std::string& shipment_id = shipment[0];
    const auto response = api_get(fmt::format("/order/{}/shipment/{}/timeline", shipment[1], shipment_id));
    ASSERT_EQ(response.status, 200) << response.body;
    auto timeline = api::decode<api::ShipmentTimeline>(response.body, api::ApiVersion::v2026_07);
    ASSERT_TRUE(timeline.ok());
    std::vector<std::int64_t> expected;
    for (const auto& entry : *timeline) expected.push_back(entry.log_type_id.value_or(-1));
    std::vector<std::int64_t> held;
    for (const auto& row : shop_app->query(fmt::format("SELECT coalesce(log_type_id, -1) FROM fulfillsync_shipment_timeline "
                                                   "WHERE shipment_id = {} ORDER BY seq",
                                                   shipment_id))) {
      held.push_back(std::stoll(row[0]));
    }
    EXPECT_EQ(held, expected) << shipment_id;
    EXPECT_GE(expected.size(), 5u) << "allocated, picked, packed, labeled, shipped, in transit";
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

TEST_P(PullSyncTest, KilledAtEveryPullFailpointLosesAndRepeatsNothing) {
  const std::vector<std::vector<std::string>> failpoints = {
      {"pull_shipments.after_page_commit@2"},
      {"pull_shipments.before_checkpoint"},
      {"mark_tracking.before_send@2"},
      {"mark_tracking.after_response"},
      {"mark_tracking.after_ledger_commit"},
      {"mark_tracking.after_result_write"},
      // An unclear mark first (killed in flight), then killed while it is looked up.
      {"mark_tracking.before_send", "mark_tracking.after_reconcile_lookup"},
      {"pull_returns.after_merchant_commit"},
      {"pull_lots.after_merchant_commit"},
  };
  for (const auto& sequence : failpoints) {
    SCOPED_TRACE(sequence.back());
    create_merchant_database();
    start();
    insert_orders("FP", 250);
    insert_returns("RMA", 10);
    watch(kWatchedInventory);
    auto result = once();
    ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
    advance_clock(25 * 3600);  // shipped and in transit; the returns have arrived

    for (const auto& failpoint : sequence) {
      result = once({"FULFILLSYNC_FAILPOINTS=" + failpoint});
      ASSERT_EQ(result.exit_status, kKilled) << failpoint << " was not reached: " << result.stderr_text;
      expect_no_mark_without_merchant_tracking();
    }
    result = once();
    ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
    expect_shipments_synced(250);
    EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_return_sync WHERE remote_status = 'Arrived' "
                    "AND arrived_at IS NOT NULL"),
              10);
    EXPECT_EQ(merchant_lots(kWatchedInventory), provider_lots(kWatchedInventory));
    if (HasFailure()) return;
  }
}

TEST_P(PullSyncTest, EqualTimestampsAcrossPageBoundariesAndOverlappingWindowsLoseNothing) {
  // A clock that barely moves: every order is created at one instant, so every shipment step of all
  // of them carries the same last_update_at, across three pages of 250.
  start({"--clock-speed", "0.000001"}, "    pull_shipments: {interval: 50ms, page_size: 250}\n");
  insert_orders("EQ", 600);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  advance_clock(400);
  {
    const auto held_before = merchant_shipments();
    std::set<std::string> instants;
    for (const auto& [id, shipment] : held_before) instants.insert(shipment.last_update_at);
    EXPECT_EQ(instants.size(), 1u) << "the orders were meant to be created at one instant";
  }
  // Killed after the second page of the window: the window was not saved, and is read again whole.
  result = once({"FULFILLSYNC_FAILPOINTS=pull_shipments.after_page_commit@2"});
  ASSERT_EQ(result.exit_status, kKilled) << result.stderr_text;
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  expect_shipments_synced(600);
  std::set<std::string> instants;
  for (const auto& [id, shipment] : merchant_shipments()) instants.insert(shipment.last_update_at);
  EXPECT_EQ(instants.size(), 1u);

  // Windows overlap: the next runs read the same instant again, and change nothing.
  const long items = count("SELECT count(*) FROM fulfillsync_shipment_items");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  expect_shipments_synced(600);
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_shipment_items"), items);
}

// What the windows cost, counted in requests: a window that holds nothing new is one page, however
// many changes came just before the quiet spell; a trickle is one page a window while its changes
// fit one, and nothing is lost.
TEST_P(PullSyncTest, AQuietWindowCostsOnePageAndATrickleOneAWindow) {
  // The sandbox's clock stands still but for the test's moves: each `once` reads one window.
  start({"--clock-speed", "0.000001"},
        "    pull_shipments: {interval: 50ms, page_size: 100}\n"
        "    mark_tracking: {mode: never}\n"
        "    pull_returns: {enabled: false}\n"
        "    pull_lots: {enabled: false}\n"
        "    pull_stock: {enabled: false}\n");
  make_orders(300);
  advance_clock(400);  // shipped with tracking, every shipment's last step at one instant
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  expect_shipments_held(300);

  // Quiet: two minutes pass with no change, three times. The window begins `overlap` (1m) before
  // the last one was read, after the last changes: one empty page, not the last changes' 3 again.
  for (int window = 1; window <= 3; ++window) {
    advance_clock(120);
    const long before = order_pages();
    result = once();
    ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
    EXPECT_EQ(order_pages() - before, 1) << "quiet window " << window;
  }

  // A trickle: 20 new orders a window, their shipments stepping on while the next ones come.
  for (int window = 1; window <= 4; ++window) {
    make_orders(20);
    advance_clock(120);
    const long before = order_pages();
    result = once();
    ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
    EXPECT_EQ(order_pages() - before, 1) << "trickle window " << window;
  }
  advance_clock(400);
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  expect_shipments_held(380);
}

// The provider lists a window's next page while the merchant database writes this one. Held by the
// shop's own transaction, the first page's write waits (the database's wait longer than the test,
// so that no second try reads the first page again); the second page is asked for meanwhile.
TEST_P(PullSyncTest, AWindowsNextPageIsAskedForWhileThisOneIsWritten) {
  start_sandbox({"--clock-speed", "0.000001"});
  write_config("",
               "    pull_shipments: {interval: 50ms, page_size: 100}\n"
               "    mark_tracking: {mode: never}\n"
               "    pull_returns: {enabled: false}\n"
               "    pull_lots: {enabled: false}\n"
               "    pull_stock: {enabled: false}\n",
               on_postgresql() ? "    statement_timeout: 120s\n" : "    busy_timeout: 120s\n");
  const auto result = once();  // the result tables made before the shop holds them
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  make_orders(300);
  advance_clock(400);
  const long before = order_pages();
  shop_app->exec(on_postgresql() ? "BEGIN; LOCK TABLE fulfillsync_shipments IN EXCLUSIVE MODE" : "BEGIN IMMEDIATE");
  auto running = run_in_background();
  const auto deadline = std::chrono::steady_clock::now() + 20s * kSanitizedSlowdown;
  while (order_pages() - before < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(order_pages() - before, 2) << running->stderr_text();
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_shipments"), 0);
  shop_app->exec("COMMIT");
  EXPECT_TRUE(wait_for_count("SELECT count(*) FROM fulfillsync_shipments", 300, 30s * kSanitizedSlowdown))
      << running->stderr_text();
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(30s), 0) << running->stderr_text();
  expect_shipments_held(300);
}

TEST_P(PullSyncTest, FaultsOnEveryPullRouteStillSyncEverythingOnce) {
  // Small batches: thirty mark requests, so that unclear and refused ones come up.
  start({}, "    pull_shipments: {interval: 50ms, page_size: 100}\n"
            "    mark_tracking: {interval: 50ms, batch_size: 10}\n"
            "    pull_returns: {interval: 50ms, page_size: 5}\n");
  insert_orders("FLT", 300);
  insert_returns("RMA", 10);
  watch(kWatchedInventory);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  advance_clock(25 * 3600);
  set_faults(
      "route=GET /*/order;500=0.1;429=0.05;retry_after_s=1;drop_before=0.05;drop_after=0.05;malformed=0.05;"
      "latency_ms=30@0.2"
      " | route=POST /*/shipment:batchUpdateTrackingUpload;500=0.1;429=0.05;retry_after_s=1;drop_before=0.05;"
      "drop_after=0.15;malformed=0.1"
      " | route=GET /*/return;500=0.1;429=0.05;retry_after_s=1;drop_after=0.05;malformed=0.1"
      " | route=GET /*/inventory-level/**;500=0.1;429=0.05;retry_after_s=1;drop_after=0.05;malformed=0.1");
  for (int attempt = 0; attempt < 5; ++attempt) {
    result = once();
    if (result.exit_status == 0) break;
  }
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  const auto stats = sandbox->admin("GET", "/_sandbox/stats");
  EXPECT_THAT(stats.body, HasSubstr("\"drop_after\":"));
  set_faults("");
  expect_shipments_synced(300);
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_return_sync WHERE remote_status = 'Arrived'"), 10);
  EXPECT_EQ(merchant_lots(kWatchedInventory), provider_lots(kWatchedInventory));
}

TEST_P(PullSyncTest, ABatchWithRefusedItemsMarksTheRestAndRetriesTheRefused) {
  start();
  insert_orders("PART", 20);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  advance_clock(400);
  // Pulled, not marked yet: then a tracking row the provider does not know slips into the table.
  write_config("", std::string(kPullJobs.substr(0, kPullJobs.find("    mark_tracking"))) +
                       "    mark_tracking: {mode: never}\n" +
                       std::string(kPullJobs.substr(kPullJobs.find("    pull_returns"))));
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  ASSERT_EQ(count("SELECT count(*) FROM fulfillsync_tracking"), 20);
  for (const auto& [id, shipment] : sandbox_shipments()) EXPECT_EQ(shipment.marks, 0) << id;
  execute("INSERT INTO fulfillsync_tracking (shipment_id, order_id, tracking_number, written_at) "
          "SELECT 99999999, order_id, 'NO-SUCH-SHIPMENT', written_at FROM fulfillsync_tracking LIMIT 1");

  write_config("", kPullJobs);
  result = once();
  EXPECT_EQ(result.exit_status, kTrackingMarksRefused) << result.stderr_text;
  EXPECT_THAT(result.stdout_text, HasSubstr("shipment 99999999: 1 attempts"));
  expect_shipments_synced(20);
  EXPECT_EQ(result_column_if_any("state", "PART-0001"), "created");
  const auto refused = shop_app->query("SELECT mark_attempts, coalesce(mark_error, ''), "
                                   "CASE WHEN upload_marked_at IS NULL THEN 1 ELSE 0 END "
                                   "FROM fulfillsync_tracking WHERE shipment_id = 99999999");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0][0], "1");
  EXPECT_THAT(refused[0][1], HasSubstr("NotFound"));
  EXPECT_EQ(refused[0][2], "1");

  // Not due again yet: a second run sends nothing, and the marked ones are never sent again.
  result = once();
  EXPECT_EQ(result.exit_status, kTrackingMarksRefused) << result.stderr_text;
  expect_shipments_synced(20);
}

TEST_P(PullSyncTest, AcknowledgedModeMarksOnlyWhatTheMerchantAcknowledged) {
  start({}, "    pull_shipments: {interval: 50ms}\n    mark_tracking: {interval: 50ms, mode: acknowledged}\n");
  insert_orders("ACK", 10);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  advance_clock(400);
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  ASSERT_EQ(count("SELECT count(*) FROM fulfillsync_tracking"), 10);
  for (const auto& [id, shipment] : sandbox_shipments()) EXPECT_EQ(shipment.marks, 0) << id;

  // The shop's application has uploaded four of them to its storefront.
  execute(fmt::format("UPDATE fulfillsync_tracking SET acknowledged_at = '{:%Y-%m-%dT%H:%M:%S}Z' WHERE shipment_id IN "
                      "(SELECT shipment_id FROM fulfillsync_tracking ORDER BY shipment_id LIMIT 4)",
                      std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now())));
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  std::set<std::int64_t> acknowledged;
  for (const auto& row : shop_app->query("SELECT shipment_id FROM fulfillsync_tracking WHERE acknowledged_at IS NOT NULL")) {
    acknowledged.insert(std::stoll(row[0]));
  }
  ASSERT_EQ(acknowledged.size(), 4u);
  for (const auto& [id, shipment] : sandbox_shipments()) {
    EXPECT_EQ(shipment.marks, acknowledged.contains(id) ? 1 : 0) << id;
  }
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_tracking WHERE upload_marked_at IS NOT NULL"), 4);
}

TEST_P(PullSyncTest, ReturnsArePolledUntilCompletedWithTheirHistoryAndActions) {
  start();
  insert_returns("RMA", 5);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_return_sync WHERE remote_status = 'AwaitingArrival'"), 5);

  advance_clock(31 * 3600);  // arrived after 24 h, processing 2 h later, completed 4 h after that
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  int seen = 0;
  for (const auto& row : shop_app->query("SELECT reference_id, remote_status, CASE WHEN arrived_at IS NULL THEN 0 ELSE 1 END "
                                     "+ CASE WHEN processing_at IS NULL THEN 0 ELSE 1 END + CASE WHEN completed_at IS "
                                     "NULL THEN 0 ELSE 1 END, status_history, actions_taken FROM fulfillsync_return_sync")) {
    const std::string& reference = row[0];
    EXPECT_EQ(row[1], "Completed") << reference;
    EXPECT_EQ(row[2], "3") << reference;
    for (const char* status : {"AwaitingArrival", "Arrived", "Processing", "Completed"}) {
      EXPECT_THAT(row[3], HasSubstr(fmt::format("\"status\":\"{}\"", status))) << reference;
    }
    EXPECT_THAT(row[4], HasSubstr("\"action\":\"Restock\"")) << reference;
    ++seen;
  }
  EXPECT_EQ(seen, 5);

  // Completed returns are not asked about again.
  const auto return_reads = [&] {
    const auto stats = sandbox->admin("GET", "/_sandbox/stats").body;
    const std::string key = R"("route":"GET /return","status":200,"count":)";
    const std::size_t at = stats.find(key);
    return at == std::string::npos ? 0L : std::stol(stats.substr(at + key.size()));
  };
  const long before = return_reads();
  ASSERT_GT(before, 0);
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(return_reads(), before);
}

TEST_P(PullSyncTest, ResyncAfterARestoreFromBackupReadsTheWindowAgainWithoutMarkingTwice) {
  start();
  insert_orders("BAK", 30);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  advance_clock(400);
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  expect_shipments_synced(30);
  // Later orders move the window on.
  insert_orders("LATER", 5);
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  advance_clock(400);
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  expect_shipments_synced(35);

  // The merchant restores its database from a backup taken before any shipment arrived: nothing is
  // read again by itself (the next window begins `overlap` before the provider's clock at the last
  // one, after every change here), so the restore needs the resync.
  execute("DELETE FROM fulfillsync_shipment_items; DELETE FROM fulfillsync_tracking; "
          "DELETE FROM fulfillsync_shipments");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(merchant_shipments().size(), 0u);

  auto resync = daemon({"resync", "--since", "2020-01-01", "--job", "pull_shipments"});
  ASSERT_EQ(resync.exit_status, 0) << resync.stderr_text;
  EXPECT_THAT(resync.stdout_text, HasSubstr("pull_shipments: moved back from"));
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  // Back, and the provider's own "uploaded" stands: nothing is marked a second time.
  expect_shipments_synced(35);

  resync = daemon({"resync", "--since", "2020-01-01", "--job", "pull_lots"});
  EXPECT_EQ(resync.exit_status, 64);
  EXPECT_THAT(resync.stderr_text, HasSubstr("no job 'pull_lots' to resync"));
}

TEST_P(PullSyncTest, LotsAppearChangeAndDisappear) {
  start();
  watch(kWatchedInventory);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  const auto initial = provider_lots(kWatchedInventory);
  ASSERT_FALSE(initial.empty());
  EXPECT_EQ(merchant_lots(kWatchedInventory), initial);

  set_lot(kWatchedInventory, "L-NEW", 8, 12);  // appears
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(merchant_lots(kWatchedInventory), provider_lots(kWatchedInventory));
  EXPECT_TRUE(merchant_lots(kWatchedInventory).contains("L-NEW@8:12/12"));

  set_lot(kWatchedInventory, "L-NEW", 8, 5);  // changes
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_TRUE(merchant_lots(kWatchedInventory).contains("L-NEW@8:5/5"));

  set_lot(kWatchedInventory, "L-NEW", 8, 0);  // disappears
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(merchant_lots(kWatchedInventory), initial);

  execute(fmt::format("DELETE FROM fulfillsync_watched_inventory WHERE inventory_id = {}", kWatchedInventory));
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_TRUE(merchant_lots(kWatchedInventory).empty());
}

// The checkpoint store has an order's cancel applied (a store restored from a copy that adopted it,
// or a provider that undid it), yet the provider shows the order Processing, changed after the
// cancel: the cancel is sent again, and only once.
TEST_P(PullSyncTest, ACancelTheProviderDoesNotShowIsSentAgainOnce) {
  start();
  insert_order("AGAIN-0001", 1);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  ASSERT_EQ(result_column("remote_status", "AGAIN-0001"), "Processing");

  // The merchant cancels; the ledger takes the cancel, which is not sent (push_cancels is off) but
  // recorded as applied, as a store that adopted it would have it.
  const std::string config = read_file(config_path);
  const std::string cancels_on = "push_cancels: {interval: 50ms}";
  std::string cancels_off = config;
  cancels_off.replace(cancels_off.find(cancels_on), cancels_on.size(), "push_cancels: {interval: 50ms, enabled: false}");
  write_file(config_path, cancels_off);
  request_cancel("AGAIN-0001");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  {
    SQLite::Database store((dir / "checkpoint.db").string(), SQLite::OPEN_READWRITE);
    ASSERT_EQ(store.exec("UPDATE outbound_ledger SET state = 'applied', remote_status = 'Cancelled', "
                         "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), result_pending = 1 "
                         "WHERE kind = 'order_cancel' AND source_key = 'AGAIN-0001'"),
              1);
  }
  write_file(config_path, config);
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  ASSERT_EQ(result_states()["AGAIN-0001"], "cancelled");

  // The provider's order moves on (picked), still Processing: the pull writes that status.
  advance_clock(70);
  std::string logs;
  for (int run = 0; run < 3; ++run) {
    result = once();
    ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
    logs += result.stderr_text;
  }
  EXPECT_THAT(logs, HasSubstr("the provider shows it Processing; sending the cancel again"));
  EXPECT_EQ(provider_orders()["AGAIN-0001"].status, "Cancelled");
  EXPECT_EQ(cancels_processed()["AGAIN-0001"], 1);
  EXPECT_EQ(result_states()["AGAIN-0001"], "cancelled");
  EXPECT_EQ(result_column("remote_status", "AGAIN-0001"), "Cancelled");
}

// An order cancelled at the merchant after it shipped: the provider refuses the cancel and the order
// will be delivered. It is never silent: `status` lists it, the metric counts it (the alert's test
// in monitoring/fulfillsync-alerts.test.yml fires on that series).
TEST_P(PullSyncTest, ACancelAfterShippingIsListedAndCounted) {
  start();
  insert_order("LATE-0001", 1);
  insert_order("LATE-0002", 2);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  advance_clock(400);  // shipped
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  ASSERT_EQ(result_column("remote_status", "LATE-0001"), "Fulfilled");

  request_cancel("LATE-0001");
  result = once();
  ASSERT_NE(result.exit_status, 69) << result.stderr_text;
  EXPECT_EQ(result_states()["LATE-0001"], "cancel_rejected");

  const auto status = daemon({"status"});
  EXPECT_THAT(status.stdout_text, HasSubstr("Cancels the provider does not show: 1\n"));
  EXPECT_THAT(status.stdout_text, ::testing::ContainsRegex("order LATE-0001 \\(provider order [0-9]+\\): cancel_rejected, "
                                                           "the provider shows Fulfilled: cannot be cancelled any more"));
  EXPECT_THAT(status.stdout_text, Not(HasSubstr("LATE-0002")));
  const auto json = daemon({"status", "--json"});
  EXPECT_THAT(json.stdout_text, ::testing::ContainsRegex(
                                    R"("cancel_mismatches": ?\[\{"reference_id": ?"LATE-0001", ?"state": ?"cancel_rejected")"));

  // The running daemon counts it.
  write_config("  listen: 127.0.0.1:0\n", kPullJobs);
  std::string config = read_file(config_path);
  const std::string disabled = "  enabled: false\n";
  config.replace(config.rfind(disabled), disabled.size(), "  enabled: true\n");
  write_file(config_path, config);
  std::uint16_t port = 0;
  auto running = start_daemon(port);
  ASSERT_NE(port, 0) << running->stderr_text();
  ASSERT_TRUE(running->wait_for_stderr("left to an operator", 20s)) << running->stderr_text();
  const auto metrics = http_get("127.0.0.1", port, "/metrics");
  EXPECT_THAT(metrics.body, HasSubstr("\nfulfillsync_cancel_mismatches 1\n"));
  running->send_signal(SIGTERM);
  EXPECT_EQ(running->wait_for_exit(30s), 0) << running->stderr_text();
}

INSTANTIATE_TEST_SUITE_P(Drivers, PullSyncTest, kBothDrivers, driver_name);

}  // namespace
}  // namespace fulfillsync::testing
