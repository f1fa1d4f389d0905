// Change detection that does not trust the merchant's clock, end to end (sync_fixture.hpp): the
// change log finds rows whatever their updated_at says, `fulfillsyncd upgrade-source` adds it while
// the shop writes. Tests write the updated_at values a stepped clock would produce; the machine's
// clock is never changed.
#include <atomic>

#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;

class ChangeDetectionTest : public SyncFixture {
 protected:
  // The merchant's clock, moved by `offset` ("-10 minutes"), in `format` (strftime's).
  std::string merchant_time(std::string_view offset, std::string_view format = "%Y-%m-%dT%H:%M:%fZ") {
    SQLite::Statement query(*merchant, "SELECT strftime(?, 'now', ?)");
    query.bind(1, std::string(format));
    query.bind(2, std::string(offset));
    query.executeStep();
    return query.getColumn(0).getString();
  }

  // Orders `prefix`-0001.. written by a server whose clock is `offset` off.
  void insert_orders_at(const std::string& prefix, int count, std::string_view offset) {
    SQLite::Transaction transaction(*merchant);
    for (int i = 1; i <= count; ++i) insert_order(fmt::format("{}-{:04}", prefix, i), i, merchant_time(offset));
    transaction.commit();
  }

  // A cancel written by a server whose clock is `offset` off.
  void request_cancel_at(const std::string& reference, std::string_view offset) {
    SQLite::Statement update(*merchant, "UPDATE fulfillsync_orders SET cancel_requested = 1, updated_at = ? "
                                        "WHERE reference_id = ?");
    update.bind(1, merchant_time(offset));
    update.bind(2, reference);
    ASSERT_EQ(update.exec(), 1);
  }

  // Orders the provider processed a cancel for, with how many times.
  std::map<std::string, std::int64_t> cancelled_orders() {
    auto processed = cancels_processed();
    std::erase_if(processed, [](const auto& entry) { return entry.second == 0; });
    return processed;
  }

  bool all_created(const std::string& prefix, int count) {
    for (int i = 1; i <= count; ++i) {
      if (!wait_for_result(fmt::format("{}-{:04}", prefix, i), "created", 20s)) return false;
    }
    return true;
  }

  // The order in which a start reads these orders: --dry-run names each as it reads it.
  std::vector<std::string> read_order(const std::vector<std::string>& references) {
    const auto dry = daemon({"--dry-run", "once"});
    EXPECT_EQ(dry.exit_status, 0) << dry.stderr_text;
    std::vector<std::pair<std::size_t, std::string>> found;
    for (const std::string& reference : references) {
      const std::size_t at = dry.stderr_text.find("order " + reference + " would be created");
      EXPECT_NE(at, std::string::npos) << reference << '\n' << dry.stderr_text;
      found.emplace_back(at, reference);
    }
    std::sort(found.begin(), found.end());
    std::vector<std::string> order;
    for (const auto& [at, reference] : found) order.push_back(reference);
    return order;
  }

  // A configuration like write_config's, with the metrics endpoint on a free loopback port.
  void write_config_with_metrics(std::string_view merchant_keys) {
    write_config("  listen: 127.0.0.1:0\n", "", merchant_keys);
    std::string config = read_file(config_path);
    const std::string disabled = "  enabled: false\n";
    config.replace(config.find(disabled), disabled.size(), "  enabled: true\n");
    write_file(config_path, config);
  }

  // fulfillsync_source_clock_steps_back_total{kind="order_create"} as the daemon on `port` exports it.
  static double clock_steps_back(std::uint16_t port) {
    const std::string text = http_get("127.0.0.1", port, "/metrics").body;
    const std::string series = "fulfillsync_source_clock_steps_back_total{kind=\"order_create\"} ";
    const std::size_t at = text.find(series);
    return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size()));
  }

  static std::size_t occurrences(const std::string& text, std::string_view needle) {
    std::size_t count = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
    return count;
  }
};

// After an NTP correction or a restored snapshot, new orders and cancels carry updated_at values
// behind the read position. Read by updated_at, none of them was ever seen.
TEST_F(ChangeDetectionTest, AClockSteppedBackTenMinutesThenTwoHoursLosesNoOrderAndNoCancel) {
  start_sandbox();
  insert_orders("NOW", 20);
  auto running = run_in_background();
  ASSERT_TRUE(all_created("NOW", 20)) << running->stderr_text();

  insert_orders_at("BACK10M", 10, "-10 minutes");
  EXPECT_TRUE(all_created("BACK10M", 10)) << running->stderr_text();
  request_cancel_at("NOW-0003", "-10 minutes");
  request_cancel_at("BACK10M-0004", "-10 minutes");
  EXPECT_TRUE(wait_for_result("NOW-0003", "cancelled", 20s)) << running->stderr_text();
  EXPECT_TRUE(wait_for_result("BACK10M-0004", "cancelled", 20s)) << running->stderr_text();

  insert_orders_at("BACK2H", 10, "-2 hours");
  EXPECT_TRUE(all_created("BACK2H", 10)) << running->stderr_text();
  request_cancel_at("NOW-0005", "-2 hours");
  request_cancel_at("BACK2H-0006", "-2 hours");
  EXPECT_TRUE(wait_for_result("NOW-0005", "cancelled", 20s)) << running->stderr_text();
  EXPECT_TRUE(wait_for_result("BACK2H-0006", "cancelled", 20s)) << running->stderr_text();
  EXPECT_TRUE(running->wait_for_stderr("the merchant's clock stepped back", 5s)) << running->stderr_text();

  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();
  EXPECT_EQ(creates().first, 40);
  const auto processed = cancelled_orders();
  for (const char* reference : {"NOW-0003", "BACK10M-0004", "NOW-0005", "BACK2H-0006"}) {
    ASSERT_TRUE(processed.contains(reference)) << reference;
    EXPECT_EQ(processed.at(reference), 1) << reference;
  }
  EXPECT_EQ(processed.size(), 4u);
}

// SQLite's CURRENT_TIMESTAMP form sorts before the contract's as text (' ' < 'T'); offsets and Z
// mixed in one table.
TEST_F(ChangeDetectionTest, NaiveOffsetAndZTimestampsMixedInOneTableAreAllRead) {
  start_sandbox();
  insert_orders("ISO", 3);
  auto running = run_in_background();
  ASSERT_TRUE(all_created("ISO", 3)) << running->stderr_text();

  insert_order("NAIVE-0001", 1, merchant_time("+0 seconds", "%Y-%m-%d %H:%M:%S"));
  insert_order("OFFSET-0001", 2, merchant_time("-2 hours", "%Y-%m-%dT%H:%M:%S-02:00"));
  insert_order("Z-0001", 3, merchant_time("+0 seconds"));
  insert_order("NAIVE-0002", 4, merchant_time("+0 seconds", "%Y-%m-%d %H:%M:%S"));
  for (const char* reference : {"NAIVE-0001", "OFFSET-0001", "Z-0001", "NAIVE-0002"}) {
    EXPECT_TRUE(wait_for_result(reference, "created", 20s)) << reference << '\n' << running->stderr_text();
  }
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();
  EXPECT_EQ(creates().first, 7);
}

// merchant.timezone: an updated_at without Z or an offset is a wall time in the shop's zone, here
// Europe/Berlin (UTC+2 in July), mixed in one table with Z and offsets. Read as UTC, the naive ones
// would come two hours late. The keys' order is not the instants' order.
TEST_F(ChangeDetectionTest, NaiveTimesInTheMerchantsZoneMixedWithZAndOffsetsAreReadInTheOrderOfTheirInstants) {
  start_sandbox();
  drop_change_log();  // with the log, updated_at decides nothing
  write_config("", "", "  timezone: Europe/Berlin\n");
  insert_order("MIX-Q", 1, "2025-07-01T12:10:00");              // 10:10Z
  insert_order("MIX-B", 2, "2025-07-01T06:20:00-04:00");        // 10:20Z
  insert_order("MIX-K", 3, "2025-07-01T10:30:00Z");             // 10:30Z
  insert_order("MIX-Z", 4, "2025-07-01T16:10:00.500+05:30");    // 10:40:00.500Z
  insert_order("MIX-A", 5, "2025-07-01 12:50:00");              // 10:50Z, SQLite's form
  EXPECT_THAT(read_order({"MIX-A", "MIX-B", "MIX-K", "MIX-Q", "MIX-Z"}),
              ::testing::ElementsAre("MIX-Q", "MIX-B", "MIX-K", "MIX-Z", "MIX-A"));

  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  for (const char* reference : {"MIX-A", "MIX-B", "MIX-K", "MIX-Q", "MIX-Z"}) {
    EXPECT_EQ(result_column("state", reference), "created") << reference;
  }
  EXPECT_EQ(creates().first, 5);
  EXPECT_THAT(daemon({"status"}).stdout_text, HasSubstr("Read fulfillsync_orders up to 2025-07-01T10:50:00.000Z MIX-A"));
  ASSERT_EQ(once().exit_status, 0);
  EXPECT_EQ(creates().first, 5);
}

// Around Berlin's changes of clocks in 2025 (30 March 02:00 CET -> 03:00 CEST, 26 October 03:00 CEST
// -> 02:00 CET, both at 01:00Z), a naive wall time the change skips or repeats takes the offset of
// before the change: in the repeated hour, the earlier instant.
TEST_F(ChangeDetectionTest, NaiveTimesAroundAChangeOfClocksTakeTheOffsetOfBeforeTheChange) {
  start_sandbox();
  drop_change_log();
  write_config("", "", "  timezone: Europe/Berlin\n");
  insert_order("DST-P", 1, "2025-03-30T01:15:00Z");  // 01:15Z
  insert_order("DST-K", 2, "2025-03-30 02:30:00");   // skipped, read in CET: 01:30Z
  insert_order("DST-X", 3, "2025-03-30T03:45:00");   // CEST: 01:45Z
  insert_order("DST-B", 4, "2025-10-26T01:30:00");   // CEST: 2025-10-25T23:30Z
  insert_order("DST-T", 5, "2025-10-26T02:30:00");   // repeated, the first (CEST): 00:30Z
  insert_order("DST-M", 6, "2025-10-26 02:45:00");   // repeated, the first (CEST): 00:45Z
  insert_order("DST-F", 7, "2025-10-26T01:00:00Z");  // 01:00Z, between the two 02:30s
  insert_order("DST-A", 8, "2025-10-26T03:30:00");   // CET: 02:30Z
  EXPECT_THAT(read_order({"DST-A", "DST-B", "DST-F", "DST-K", "DST-M", "DST-P", "DST-T", "DST-X"}),
              ::testing::ElementsAre("DST-P", "DST-K", "DST-X", "DST-B", "DST-T", "DST-M", "DST-F", "DST-A"));

  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(creates().first, 8);
  EXPECT_THAT(daemon({"status"}).stdout_text, HasSubstr("Read fulfillsync_orders up to 2025-10-26T02:30:00.000Z DST-A"));
}

// Without the change log a clock stepped back hides rows from the read by updated_at; the sweep
// creates them. Each row is counted as the change log's are, and each step is logged once: rows
// behind the same read position are one step, as far as the daemon can tell.
TEST_F(ChangeDetectionTest, WithoutTheChangeLogAClockSteppedBackIsFoundCountedAndLoggedOncePerStep) {
  start_sandbox();
  drop_change_log();
  write_config_with_metrics("  reconcile_interval: 2s\n");
  insert_orders("NOW", 5);
  std::uint16_t port = 0;
  auto running = start_daemon(port);
  ASSERT_NE(port, 0) << running->stderr_text();
  ASSERT_TRUE(all_created("NOW", 5)) << running->stderr_text();

  insert_orders_at("BACK10M", 3, "-10 minutes");
  EXPECT_TRUE(all_created("BACK10M", 3)) << running->stderr_text();
  EXPECT_TRUE(running->wait_for_stderr("BACK10M-0001: updated_at", 5s)) << running->stderr_text();
  EXPECT_EQ(clock_steps_back(port), 3);

  insert_orders("CORRECTED", 1);  // the clock put right: the read position moves on
  EXPECT_TRUE(all_created("CORRECTED", 1)) << running->stderr_text();
  insert_orders_at("BACK2H", 3, "-2 hours");
  EXPECT_TRUE(all_created("BACK2H", 3)) << running->stderr_text();
  EXPECT_TRUE(running->wait_for_stderr("BACK2H-0001: updated_at", 5s)) << running->stderr_text();
  EXPECT_EQ(clock_steps_back(port), 6);

  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();
  const std::string log = running->stderr_text();
  EXPECT_EQ(occurrences(log, "the merchant's clock stepped back"), 2u) << log;
  EXPECT_THAT(log, HasSubstr("is older than the read position"));
  EXPECT_EQ(creates().first, 12);
}

// A change made and reverted while nothing polled sends nothing: the content is what was sent.
TEST_F(ChangeDetectionTest, AChangeMadeAndRevertedBetweenPollsSendsNothing) {
  start_sandbox();
  insert_orders("REV", 2);
  ASSERT_EQ(once().exit_status, 0);
  execute("UPDATE fulfillsync_orders SET city = 'Dallas' WHERE reference_id = 'REV-0001'");
  execute("UPDATE fulfillsync_orders SET city = 'Austin' WHERE reference_id = 'REV-0001'");
  request_cancel("REV-0002");
  execute("UPDATE fulfillsync_orders SET cancel_requested = 0 WHERE reference_id = 'REV-0002'");
  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(creates().first, 2);
  EXPECT_TRUE(cancelled_orders().empty());
  EXPECT_EQ(result_column("note", "REV-0001"), "");
  EXPECT_EQ(result_column("state", "REV-0002"), "created");
}

// 10,000 changes while the daemon is stopped: each sent once, and the handled log is pruned. (2,000
// under a sanitizer, where 10,000 took minutes; the plain build has the full run.)
TEST_F(ChangeDetectionTest, TenThousandChangesWhileStoppedAreSentOnceAndTheLogIsPruned) {
  constexpr int kChanges = kSanitized ? 2'000 : 10'000;
  start_sandbox();
  insert_orders("FIRST", 5);
  ASSERT_EQ(once().exit_status, 0);
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_changes"), 0);

  // Half of them dated an hour behind what was read already.
  {
    SQLite::Transaction transaction(*merchant);
    for (int i = 1; i <= kChanges; ++i) {
      insert_order(fmt::format("BULK-{:05}", i), i, i % 2 == 0 ? merchant_time("-1 hours") : "");
    }
    transaction.commit();
  }
  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(creates().first, kChanges + 5);
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_order_sync WHERE state = 'created'"), kChanges + 5);
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_changes"), 0);
  ASSERT_EQ(once().exit_status, 0);
  EXPECT_EQ(creates().first, kChanges + 5);
  const auto status = daemon({"status"});
  EXPECT_THAT(status.stdout_text, HasSubstr("Read fulfillsync_orders by the change log up to "));
  EXPECT_THAT(status.stdout_text, HasSubstr("; 0 rows changed since, not read yet"));
}

// The catch-up of the rows changed before the change log saves how far it has read: killed in the
// middle, the next start goes on from there, and every order is created once.
TEST_F(ChangeDetectionTest, ACatchUpKilledInTheMiddleGoesOnWithoutLossOrDuplicate) {
  start_sandbox();
  insert_orders("BEFORE", 1200);  // a first start reads them by the catch-up (sync.orders_since is 2020)
  auto result = once({"FULFILLSYNC_FAILPOINTS=intake.before_commit@2"});
  ASSERT_NE(result.exit_status, 0) << "the failpoint was not reached:\n" << result.stderr_text;
  const auto saved = [&](const std::string& name) {
    SQLite::Database store((dir / "checkpoint.db").string(), SQLite::OPEN_READONLY);
    SQLite::Statement query(store, "SELECT position FROM cursors WHERE job = ?");
    query.bind(1, name);
    return query.executeStep() ? query.getColumn(0).getString() : std::string("(none)");
  };
  const std::string position = saved("catch-up:fulfillsync_orders");
  EXPECT_GT(position, "BEFORE-0001") << "the catch-up's position was not saved";
  EXPECT_LT(position, "BEFORE-1200");
  EXPECT_THAT(saved("changes:fulfillsync_orders"), ::testing::StartsWith("catch-up "));

  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(count("SELECT count(*) FROM fulfillsync_order_sync WHERE state = 'created'"), 1200);
  EXPECT_EQ(creates().first, 1200);
  EXPECT_EQ(provider_orders().size(), 1200u);
  EXPECT_THAT(saved("changes:fulfillsync_orders"), ::testing::Not(::testing::StartsWith("catch-up ")));
}

// A database written by the schema without the change log: `upgrade-source` adds it while the shop
// inserts orders, twice (the second changes nothing); then a stepped-back clock hides nothing.
TEST_F(ChangeDetectionTest, UpgradeSourceWhileTheMerchantInsertsLosesNothing) {
  start_sandbox();
  drop_change_log();
  insert_orders("OLD", 5);
  ASSERT_EQ(once().exit_status, 0);

  std::atomic<bool> stop = false;
  std::atomic<int> inserted = 0;
  std::thread shop([&] {
    SQLite::Database db((dir / "merchant.db").string(), SQLite::OPEN_READWRITE);
    db.setBusyTimeout(10000);
    while (!stop) {
      const int n = inserted + 1;
      fulfillsync::testing::insert_order(db, fmt::format("LIVE-{:04}", n), n);
      inserted = n;
      std::this_thread::sleep_for(2ms);
    }
  });
  while (inserted < 20) std::this_thread::sleep_for(5ms);
  const auto first = daemon({"upgrade-source"});
  const auto second = daemon({"upgrade-source"});
  while (inserted < 60) std::this_thread::sleep_for(5ms);
  stop = true;
  shop.join();
  ASSERT_EQ(first.exit_status, 0) << first.stderr_text;
  EXPECT_THAT(first.stdout_text, HasSubstr("change log added"));
  ASSERT_EQ(second.exit_status, 0) << second.stderr_text;
  EXPECT_THAT(second.stdout_text, HasSubstr("nothing to do"));

  insert_orders_at("BACK", 5, "-2 hours");
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  insert_orders_at("LATER", 5, "-3 hours");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;

  const int live = inserted;
  const auto orders = provider_orders();
  for (int i = 1; i <= live; ++i) EXPECT_TRUE(orders.contains(fmt::format("LIVE-{:04}", i))) << i;
  for (int i = 1; i <= 5; ++i) {
    EXPECT_TRUE(orders.contains(fmt::format("BACK-{:04}", i))) << i;
    EXPECT_TRUE(orders.contains(fmt::format("LATER-{:04}", i))) << i;
  }
  EXPECT_EQ(creates().first, 5 + live + 10);
  EXPECT_EQ(static_cast<long>(orders.size()), 5 + live + 10);
}

// --dry-run shows what a start would take from the change log, stepped-back clock or not.
TEST_F(ChangeDetectionTest, DryRunReadsTheChangeLog) {
  start_sandbox();
  insert_orders("SENT", 3);
  ASSERT_EQ(once().exit_status, 0);
  insert_orders_at("BACK", 2, "-1 hours");
  const auto dry = daemon({"--dry-run", "once"});
  EXPECT_EQ(dry.exit_status, 0) << dry.stderr_text;
  EXPECT_THAT(dry.stdout_text, HasSubstr("2 orders would be created"));
  EXPECT_THAT(dry.stderr_text, HasSubstr("BACK-0001 would be created"));
  EXPECT_EQ(creates().first, 3);
}

// A change that change detection drops (the fault, as a bug would) is found by the sweep and sent;
// the find is logged as a defect. Without the sweep the order would never be created.
TEST_F(ChangeDetectionTest, TheSweepFindsAChangeThatChangeDetectionDropped) {
  start_sandbox();
  write_config("", "", "  reconcile_interval: 2s\n");
  insert_orders("SEEN", 3);
  auto running = run_in_background("intake.drop_one_change");
  ASSERT_TRUE(all_created("SEEN", 3)) << running->stderr_text();
  // In one transaction: the dropped change must be the order's only one. Inserted row by row, its
  // lines would log later changes of it, which change detection takes (not the sweep).
  insert_orders("DROPPED", 1);
  ASSERT_TRUE(running->wait_for_stderr("order DROPPED-0001: its change dropped (fault intake.drop_one_change)", 10s))
      << running->stderr_text();
  insert_order("LATER-0001", 2);
  ASSERT_TRUE(wait_for_result("LATER-0001", "created", 20s)) << running->stderr_text();
  EXPECT_TRUE(wait_for_result("DROPPED-0001", "created", 20s)) << running->stderr_text();
  EXPECT_TRUE(running->wait_for_stderr("order DROPPED-0001: found by the reconciliation sweep", 5s))
      << running->stderr_text();
  EXPECT_TRUE(running->wait_for_stderr("1 missed by change detection", 5s)) << running->stderr_text();
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();
  EXPECT_EQ(creates().first, 5);
  EXPECT_EQ(provider_orders().count("DROPPED-0001"), 1u);
}

// status never says "nothing waiting" while a row the daemon should have taken has no result.
TEST_F(ChangeDetectionTest, StatusDoesNotSayNothingWaitsWhileARowHasNoResult) {
  start_sandbox();
  insert_orders("SEEN", 2);
  ASSERT_EQ(once().exit_status, 0);
  insert_order("DROPPED-0001", 1);
  const auto dropped = once({"FULFILLSYNC_FAILPOINTS=intake.drop_one_change"});
  ASSERT_EQ(dropped.exit_status, 0) << dropped.stderr_text;
  ASSERT_EQ(result_column("state", "DROPPED-0001"), "(no row)");
  const auto status = daemon({"status"});
  EXPECT_EQ(status.exit_status, 3) << status.stderr_text;  // no daemon runs after once
  EXPECT_THAT(status.stdout_text, ::testing::Not(HasSubstr("Nothing waiting to be sent")));
  EXPECT_THAT(status.stdout_text,
              HasSubstr("Nothing in the ledger waits, but 1 source rows have a version the ledger does not hold yet"));
  EXPECT_THAT(daemon({"status", "--json"}).stdout_text, HasSubstr(R"("source_rows_waiting":1,)"));
}

// The count is the reconciliation sweep's comparison, not "rows without a result": an edit of an
// order already created, which change detection dropped, waits too (until the sweep sends it).
TEST_F(ChangeDetectionTest, StatusCountsADroppedEditOfACreatedOrderAsWaiting) {
  start_sandbox();
  insert_orders("SEEN", 2);
  ASSERT_EQ(once().exit_status, 0);
  ASSERT_EQ(result_column("state", "SEEN-0001"), "created");
  execute("UPDATE fulfillsync_orders SET gift_message = 'Enjoy' WHERE reference_id = 'SEEN-0001'");
  const auto dropped = once({"FULFILLSYNC_FAILPOINTS=intake.drop_one_change"});
  ASSERT_EQ(dropped.exit_status, 0) << dropped.stderr_text;
  ASSERT_THAT(dropped.stderr_text, HasSubstr("order SEEN-0001: its change dropped"));
  const auto status = daemon({"status"});
  EXPECT_THAT(status.stdout_text, ::testing::Not(HasSubstr("Nothing waiting to be sent")));
  EXPECT_THAT(status.stdout_text,
              HasSubstr("Nothing in the ledger waits, but 1 source rows have a version the ledger does not hold yet"));
  EXPECT_THAT(daemon({"status", "--json"}).stdout_text, HasSubstr(R"("source_rows_waiting":1,)"));

  // The sweep takes it (an edit the API cannot apply to a created order, noted), and nothing waits.
  write_config("", "", "  reconcile_interval: 1s\n");
  auto running = run_in_background();
  EXPECT_TRUE(running->wait_for_stderr("order SEEN-0001: found by the reconciliation sweep", 10s))
      << running->stderr_text();
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();
  const auto after = daemon({"status"});
  EXPECT_THAT(after.stdout_text, HasSubstr("Nothing waiting to be sent")) << after.stdout_text;
  EXPECT_THAT(daemon({"status", "--json"}).stdout_text, HasSubstr(R"("source_rows_waiting":0,)"));
}

// A shop whose own tables are mapped with views (schema/merchant/README.md): no change log, so rows
// are read by updated_at, which here is the shop's `modified_at DEFAULT CURRENT_TIMESTAMP`.
class ViewSourceTest : public ChangeDetectionTest {
 protected:
  void SetUp() override {
    ChangeDetectionTest::SetUp();
    drop_change_log();
    for (const char* table : {"fulfillsync_order_lines", "fulfillsync_orders", "fulfillsync_return_lines",
                              "fulfillsync_returns", "fulfillsync_watched_inventory"}) {
      execute(fmt::format("DROP TABLE {}", table));
    }
    execute(R"sql(
      CREATE TABLE shop_order (id INTEGER PRIMARY KEY, name TEXT NOT NULL, street TEXT NOT NULL,
                               cancelled INTEGER NOT NULL DEFAULT 0,
                               modified_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);
      CREATE TABLE shop_order_item (order_id INTEGER, position INTEGER, sku TEXT, title TEXT, qty INTEGER);
      CREATE TABLE shop_rma (rma TEXT PRIMARY KEY, warehouse INTEGER,
                             modified_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);
      CREATE TABLE shop_rma_item (rma TEXT, position INTEGER, inventory_id INTEGER, qty INTEGER, action TEXT);
      CREATE VIEW fulfillsync_orders AS
      SELECT 'SHOP-' || id AS reference_id, CAST(id AS TEXT) AS order_number, 'Standard' AS shipping_method,
             'DTC' AS type, NULL AS sales_channel, NULL AS origin_platform_program, NULL AS gift_message,
             NULL AS purchase_date, NULL AS location_id, NULL AS total_price, name AS recipient_name,
             NULL AS recipient_email, NULL AS recipient_phone, street AS address1, NULL AS address2,
             'Austin' AS city, 'TX' AS state, '78701' AS zip_code, 'US' AS country, NULL AS company_name,
             NULL AS tags, cancelled AS cancel_requested, modified_at AS updated_at
      FROM shop_order;
      CREATE VIEW fulfillsync_order_lines AS
      SELECT 'SHOP-' || order_id AS order_reference_id, position AS line_number, NULL AS product_id,
             sku AS product_reference_id, title AS product_name, qty AS quantity, NULL AS external_line_id,
             NULL AS unit_of_measure
      FROM shop_order_item;
      CREATE VIEW fulfillsync_returns AS
      SELECT rma AS reference_id, warehouse AS fulfillment_center_id, NULL AS fulfillment_center_name,
             NULL AS original_shipment_id, NULL AS tracking_number, NULL AS tags, modified_at AS updated_at
      FROM shop_rma;
      CREATE VIEW fulfillsync_return_lines AS
      SELECT rma AS return_reference_id, position AS line_number, inventory_id, qty AS quantity,
             action AS requested_action
      FROM shop_rma_item;
      CREATE VIEW fulfillsync_watched_inventory AS SELECT DISTINCT inventory_id FROM shop_rma_item;
    )sql");
  }

  // Shop order `id`, its modified_at by the column's default unless given.
  void insert_shop_order(int id, std::string_view modified_at = {}) {
    SQLite::Transaction transaction(*merchant);
    SQLite::Statement order(*merchant, modified_at.empty()
                                           ? "INSERT INTO shop_order (id, name, street) VALUES (?1, ?2, ?3)"
                                           : "INSERT INTO shop_order (id, name, street, modified_at) "
                                             "VALUES (?1, ?2, ?3, ?4)");
    order.bind(1, id);
    order.bind(2, fmt::format("Customer {}", id));
    order.bind(3, fmt::format("{} Main Street", id));
    if (!modified_at.empty()) order.bind(4, std::string(modified_at));
    order.exec();
    SQLite::Statement item(*merchant, "INSERT INTO shop_order_item VALUES (?1, 1, 'TSHIRT-L', "
                                      "'Organic Cotton T-Shirt L', 1)");
    item.bind(1, id);
    item.exec();
    transaction.commit();
  }
};

// A first start without sync.orders_since pushes what changes from then on. Compared as text,
// `2026-11-25 10:00:01` sorts before the starting point `2026-11-25T10:00:00.500Z`: nothing was pushed.
// Values in other forms mixed in are read in time order too; one that is no time is rejected with
// its reason and holds nothing up.
TEST_F(ViewSourceTest, AViewWhoseUpdatedAtIsCurrentTimestampIsReadAsInstants) {
  start_sandbox();
  std::string config = read_file(config_path);
  const std::string since = "  orders_since: 2020-01-01T00:00:00Z\n";
  config.erase(config.find(since), since.size());
  write_file(config_path, config);
  auto running = run_in_background();
  ASSERT_TRUE(running->wait_for_stderr("first start: pushing source rows changed at or after", 20s))
      << running->stderr_text();
  std::this_thread::sleep_for(1100ms);  // CURRENT_TIMESTAMP has whole seconds

  insert_shop_order(1);
  insert_shop_order(2);
  EXPECT_TRUE(wait_for_result("SHOP-1", "created", 20s)) << running->stderr_text();
  EXPECT_TRUE(wait_for_result("SHOP-2", "created", 20s)) << running->stderr_text();
  insert_shop_order(3, merchant_time("+0 seconds"));                            // Z
  insert_shop_order(4, merchant_time("+2 hours", "%Y-%m-%dT%H:%M:%S+02:00"));  // an offset
  insert_shop_order(5, "yesterday");
  insert_shop_order(6);
  for (const char* reference : {"SHOP-3", "SHOP-4", "SHOP-6"}) {
    EXPECT_TRUE(wait_for_result(reference, "created", 20s)) << reference << '\n' << running->stderr_text();
  }
  EXPECT_TRUE(wait_for_result("SHOP-5", "rejected", 20s)) << running->stderr_text();
  EXPECT_THAT(result_column("last_error", "SHOP-5"),
              HasSubstr("fulfillsync_orders: updated_at is not a time, found 'yesterday'"));
  const auto status = daemon({"status"});
  EXPECT_THAT(status.stdout_text, HasSubstr("updated_at is not a time, found 'yesterday'"));
  // The sweep's comparison reads the views too (status counts with it; null would be "cannot tell").
  EXPECT_THAT(daemon({"status", "--json"}).stdout_text, ::testing::ContainsRegex(R"("source_rows_waiting":[0-9])"));

  // Corrected, it is taken.
  execute("UPDATE shop_order SET modified_at = CURRENT_TIMESTAMP WHERE id = 5");
  EXPECT_TRUE(wait_for_result("SHOP-5", "created", 20s)) << running->stderr_text();
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();
  EXPECT_EQ(creates().first, 6);
}

}  // namespace
}  // namespace fulfillsync::testing
