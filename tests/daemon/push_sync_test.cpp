// The push jobs end to end (sync_fixture.hpp).
#include "fulfillsync/daemon/job/failpoints.hpp"
#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;

// The daemon's failpoints on the push path of orders and returns (intake and the push jobs), in its
// order: one added there is tested here as well. (push_products: catalog_sync_test.)
std::vector<std::string> push_failpoints() {
  std::vector<std::string> names;
  for (const std::string_view name : daemon::kFailpoints) {
    if (name.starts_with("push_products.")) continue;
    if (name.starts_with("intake.") || name.starts_with("push_")) names.emplace_back(name);
  }
  return names;
}

class PushSyncTest : public SyncFixture {};

TEST_F(PushSyncTest, ThousandOrdersHundredCancelsAndHundredReturnsArriveExactlyOnce) {
  start_sandbox();
  insert_orders("ORD", 1000);
  insert_returns("RMA", 100);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stdout_text, HasSubstr("order_create"));

  // The customer cancels a hundred of them after they were created.
  std::set<std::string> cancelled;
  for (int i = 1; i <= 1000; i += 10) {
    cancelled.insert(fmt::format("ORD-{:04}", i));
    request_cancel(fmt::format("ORD-{:04}", i));
  }
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;

  expect_orders_delivered("ORD", 1000, cancelled);
  const auto returns = provider_returns();
  ASSERT_EQ(returns.size(), 100u);
  for (int i = 1; i <= 100; ++i) {
    const std::string reference = fmt::format("RMA-{:03}", i);
    ASSERT_TRUE(returns.contains(reference)) << reference;
    const auto& ret = returns.at(reference);
    ASSERT_TRUE(ret.fulfillment_center);
    EXPECT_EQ(ret.fulfillment_center->id, 8);
    EXPECT_EQ(ret.tracking_number, fmt::format("1Z{:010}", i));
    ASSERT_EQ(ret.inventory.size(), 1u);
    EXPECT_EQ(ret.inventory[0].id, 7002);
    EXPECT_EQ(ret.inventory[0].quantity, 1 + i % 2);
    EXPECT_EQ(result_column("state", reference, "fulfillsync_return_sync"), "created");
    EXPECT_EQ(result_column("remote_id", reference, "fulfillsync_return_sync"), std::to_string(ret.id));
    EXPECT_NE(result_column("remote_created_at", reference, "fulfillsync_return_sync"), "");
  }
  EXPECT_EQ(creates(), std::make_pair(1000L, 100L));

  // Nothing is left; a third run creates nothing.
  result = once();
  EXPECT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(creates(), std::make_pair(1000L, 100L));
}

TEST_F(PushSyncTest, KilledAtEveryFailpointStillDeliversEverythingOnce) {
  // Each failpoint in turn, on a fresh provider and store: the armed run must die there, and the
  // next runs must deliver everything once.
  const std::vector<std::string> failpoints = push_failpoints();
  ASSERT_FALSE(failpoints.empty());
  for (const std::string& failpoint : failpoints) {
    SCOPED_TRACE(failpoint);
    sandbox.reset();
    create_merchant_database();
    start_sandbox();
    insert_orders("KILL", 30);
    insert_returns("RKILL", 5);
    const std::string job = failpoint.substr(0, failpoint.find('.'));
    const std::set<std::string> cancelled = {"KILL-0002", "KILL-0007", "KILL-0011"};
    const auto arm = [](const std::string& name) { return std::vector<std::string>{"FULFILLSYNC_FAILPOINTS=" + name}; };

    if (job == "push_cancels") {
      ASSERT_EQ(once().exit_status, 0);  // the orders exist; now their cancels are to be sent
      for (const auto& reference : cancelled) request_cancel(reference);
    }
    if (failpoint.ends_with("after_reconcile_lookup")) {
      // Lookups happen only after an unclear send: a crash while in flight makes them.
      const auto first = once(arm(job + ".after_mark"));
      ASSERT_EQ(first.exit_status, kKilled) << first.stderr_text;
    }
    const auto killed = once(arm(failpoint));
    ASSERT_EQ(killed.exit_status, kKilled) << "the failpoint was never reached:\n" << killed.stderr_text;
    EXPECT_THAT(killed.stderr_text, HasSubstr("failpoint " + failpoint));

    if (job != "push_cancels") {
      for (const auto& reference : cancelled) request_cancel(reference);
    }
    const auto finished = once();
    ASSERT_EQ(finished.exit_status, 0) << finished.stderr_text;

    // Cancelled before creation (all but the push_cancels case) means never created.
    const auto orders = provider_orders();
    if (job == "push_cancels") {
      expect_orders_delivered("KILL", 30, cancelled);
      EXPECT_EQ(creates().first, 30);
    } else {
      for (const auto& reference : cancelled) {
        // Orders created before the crash are cancelled; the others were never created.
        if (orders.contains(reference)) {
          EXPECT_EQ(orders.at(reference).status, "Cancelled") << reference;
          EXPECT_EQ(result_states()[reference], "cancelled") << reference;
        }
      }
      for (int i = 1; i <= 30; ++i) {
        const std::string reference = fmt::format("KILL-{:04}", i);
        if (cancelled.contains(reference)) continue;
        EXPECT_TRUE(orders.contains(reference)) << reference << " is missing";
        EXPECT_EQ(result_states()[reference], "created") << reference;
      }
      EXPECT_EQ(creates().first, static_cast<long>(orders.size()));
    }
    EXPECT_EQ(provider_returns().size(), 5u);
    EXPECT_EQ(creates().second, 5);
    EXPECT_EQ(result_states("fulfillsync_return_sync").size(), 5u);
  }
}

TEST_F(PushSyncTest, FaultsOnEveryCallStillDeliverEverythingOnce) {
  start_sandbox({"--fault-seed", "7", "--faults",
                 "route=POST /**;500=0.1;429=0.05;retry_after_s=1;drop_after=0.05;drop_before=0.05;latency_ms=300@0.05"
                 " | route=GET /**;503=0.05;drop_before=0.05"});
  insert_orders("FLT", 300);
  insert_returns("RFLT", 30);
  for (int i = 1; i <= 300; i += 15) request_cancel(fmt::format("FLT-{:04}", i));  // before any create
  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  sandbox->admin("POST", "/_sandbox/faults", "");  // so that the test's own reads get through
  std::set<std::string> never_created;
  for (int i = 1; i <= 300; i += 15) never_created.insert(fmt::format("FLT-{:04}", i));

  const auto orders = provider_orders();
  EXPECT_EQ(orders.size(), 300u - never_created.size());
  for (const auto& reference : never_created) EXPECT_FALSE(orders.contains(reference)) << reference;
  for (const auto& [reference, order] : orders) {
    EXPECT_EQ(result_column("remote_id", reference), std::to_string(order.id)) << reference;
  }
  EXPECT_EQ(provider_returns().size(), 30u);
  EXPECT_EQ(creates(), std::make_pair(static_cast<long>(orders.size()), 30L));
  // The faults were real: the sandbox injected them and refused the resends of processed creates.
  const auto stats = sandbox->admin("GET", "/_sandbox/stats").body;
  EXPECT_THAT(stats, HasSubstr("\"drop_after\":"));
  EXPECT_THAT(result.stderr_text, HasSubstr("adopted"));
}

// A create whose answer was lost waits for its lookup, and meanwhile the merchant edits the order,
// then cancels it. The lookup finds nothing, so the order is withdrawn; the edited version, held back
// while the create was unclear, must not be sent after the cancel.
TEST_F(PushSyncTest, AnEditHeldWhileACreateIsUnclearDoesNotOutliveALaterCancel) {
  start_sandbox();
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults", "route=POST /*/order;drop_before=1").status, 200);
  insert_orders("HELD", 1);
  auto running = run_in_background();
  ASSERT_TRUE(wait_for_sandbox_count("drop_before", 1, 20s)) << running->stderr_text();
  const auto unclear_since = std::chrono::steady_clock::now();
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults", "").status, 200);
  // Read by the daemon well within the lookup's wait (the 5 s request timeout).
  execute("UPDATE fulfillsync_orders SET recipient_name = 'Someone Else' WHERE reference_id = 'HELD-0001'");
  std::this_thread::sleep_for(1s);
  request_cancel("HELD-0001");
  std::this_thread::sleep_until(unclear_since + 9s);
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();

  EXPECT_FALSE(provider_orders().contains("HELD-0001")) << running->stderr_text();
  EXPECT_EQ(result_column("state", "HELD-0001"), "cancelled");
  EXPECT_THAT(result_column("note", "HELD-0001"), HasSubstr("never sent"));
}

TEST_F(PushSyncTest, ARowCommittedLateWithAnOlderTimestampIsStillPushed) {
  start_sandbox();
  insert_orders("LATE", 5);
  ChildProcess running(ChildProcess::Options{
      .argv = {binary_path("fulfillsyncd").string(), "--config", config_path.string(), "run"},
      .unset_env = {"NOTIFY_SOCKET", "FULFILLSYNC_FAILPOINTS"}});
  const auto wait_for_state = [&](const std::string& reference, std::string_view state) {
    for (int i = 0; i < 300; ++i) {
      if (result_column_if_any("state", reference) == state) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  };
  ASSERT_TRUE(wait_for_state("LATE-0005", "created")) << running.stderr_text();
  // A transaction that took its timestamp a minute ago commits only now: its row sorts before the
  // cursor, which has moved past it.
  const std::string a_minute_ago = [&] {
    SQLite::Statement query(*merchant, "SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-60 seconds')");
    query.executeStep();
    return query.getColumn(0).getString();
  }();
  insert_order("LATE-0000", 6, a_minute_ago);
  EXPECT_TRUE(wait_for_state("LATE-0000", "created")) << running.stderr_text();
  EXPECT_TRUE(provider_orders().contains("LATE-0000"));
  running.send_signal(SIGTERM);
  EXPECT_EQ(running.wait_for_exit(20s), 0);
}

TEST_F(PushSyncTest, InvalidRowsAreRejectedWithTheirReasonsAndTheRestGoesThrough) {
  start_sandbox();
  insert_orders("OK", 4);
  insert_order("BAD-NAME", 1);
  execute("UPDATE fulfillsync_orders SET recipient_name = NULL WHERE reference_id = 'BAD-NAME'");
  insert_order("BAD-QTY", 2);
  execute("UPDATE fulfillsync_order_lines SET quantity = 0 WHERE order_reference_id = 'BAD-QTY'");
  insert_order("BAD-TYPE", 3);
  execute("UPDATE fulfillsync_orders SET type = 'Retail' WHERE reference_id = 'BAD-TYPE'");
  insert_order("BAD-GIFT", 4);
  execute("UPDATE fulfillsync_orders SET gift_message = printf('%.501c', 'x') WHERE reference_id = 'BAD-GIFT'");
  insert_order("BAD,COMMA", 5);
  execute("INSERT INTO fulfillsync_orders (reference_id, shipping_method, recipient_name, address1, city, zip_code, "
          "country) VALUES ('BAD-NOLINES', 'Standard', 'Nobody', '1 Road', 'Austin', '78701', 'US')");
  insert_order("BAD-LOCATION", 6);  // valid here; the provider knows no fulfillment center 999
  execute("UPDATE fulfillsync_orders SET location_id = 999 WHERE reference_id = 'BAD-LOCATION'");
  execute("INSERT INTO fulfillsync_returns (reference_id, fulfillment_center_id) VALUES ('RMA-NOCENTER', NULL)");
  execute("INSERT INTO fulfillsync_return_lines (return_reference_id, line_number, inventory_id, quantity, "
          "requested_action) VALUES ('RMA-NOCENTER', 1, 7002, 1, 'Restock')");
  execute("INSERT INTO fulfillsync_returns (reference_id, fulfillment_center_id) VALUES ('RMA-NOLINES', 8)");

  auto result = once();
  EXPECT_EQ(result.exit_status, kRowsStayRejected) << result.stderr_text;
  const auto orders = provider_orders();
  EXPECT_EQ(orders.size(), 4u);
  for (int i = 1; i <= 4; ++i) EXPECT_TRUE(orders.contains(fmt::format("OK-{:04}", i)));

  const std::map<std::string, std::string> reasons = {
      {"BAD-NAME", "recipient_name is required"},
      {"BAD-QTY", "quantity must be at least 1, found 0"},
      {"BAD-TYPE", "type must be DTC, DropShip or B2B"},
      {"BAD-GIFT", "gift_message must be at most 500 characters, found 501"},
      {"BAD,COMMA", "reference_id must not contain a comma"},
      {"BAD-NOLINES", "at least one"},
      {"BAD-LOCATION", "Fulfillment center 999 does not exist"},
  };
  for (const auto& [reference, reason] : reasons) {
    EXPECT_EQ(result_column("state", reference), "rejected") << reference;
    EXPECT_THAT(result_column("last_error", reference), HasSubstr(reason)) << reference;
  }
  EXPECT_EQ(result_column("state", "RMA-NOCENTER", "fulfillsync_return_sync"), "rejected");
  EXPECT_THAT(result_column("last_error", "RMA-NOCENTER", "fulfillsync_return_sync"),
              HasSubstr("fulfillment_center_id is required"));
  EXPECT_EQ(result_column("state", "RMA-NOLINES", "fulfillsync_return_sync"), "rejected");

  // status names them with their reasons.
  const auto status = daemon({"status"});
  EXPECT_EQ(status.exit_status, 3) << status.stderr_text;  // no daemon runs once `once` has ended
  EXPECT_THAT(status.stdout_text, HasSubstr("order BAD-QTY"));
  EXPECT_THAT(status.stdout_text, HasSubstr("0 rows changed since, not read yet"));
  EXPECT_THAT(status.stdout_text, HasSubstr("Fulfillment center 999 does not exist"));

  // A provider's refusal can be retried as it is (and is refused again); a local one needs a fix.
  const auto retried = daemon({"retry", "BAD-LOCATION"});
  EXPECT_EQ(retried.exit_status, 0) << retried.stderr_text;
  EXPECT_EQ(daemon({"retry", "BAD-NAME"}).exit_status, kRowsStayRejected);
  EXPECT_EQ(once().exit_status, kRowsStayRejected);
  EXPECT_EQ(result_column("attempts", "BAD-LOCATION"), "2");

  // Fixing rows is all it takes.
  execute("UPDATE fulfillsync_orders SET recipient_name = 'Somebody' WHERE reference_id = 'BAD-NAME'");
  execute("UPDATE fulfillsync_orders SET location_id = NULL WHERE reference_id = 'BAD-LOCATION'");
  result = once();
  EXPECT_EQ(result.exit_status, kRowsStayRejected) << result.stderr_text;  // the others still are
  EXPECT_EQ(result_column("state", "BAD-NAME"), "created");
  EXPECT_EQ(result_column("state", "BAD-LOCATION"), "created");
  EXPECT_EQ(result_column("last_error", "BAD-NAME"), "");
  EXPECT_EQ(provider_orders().size(), 6u);
}

TEST_F(PushSyncTest, ACancelBeforeCreationNeverCreatesAndAChangeAfterItIsReported) {
  start_sandbox();
  insert_orders("CXL", 3);
  request_cancel("CXL-0001");
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  auto orders = provider_orders();
  EXPECT_FALSE(orders.contains("CXL-0001"));
  EXPECT_EQ(result_column("state", "CXL-0001"), "cancelled");
  EXPECT_THAT(result_column("note", "CXL-0001"), HasSubstr("never sent"));
  EXPECT_EQ(result_column("remote_id", "CXL-0001"), "");

  // After creation: a cancel is sent; an address change cannot be, and is reported.
  request_cancel("CXL-0002");
  execute("UPDATE fulfillsync_orders SET address1 = '2 New Road' WHERE reference_id = 'CXL-0003'");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  orders = provider_orders();
  EXPECT_EQ(orders.at("CXL-0002").status, "Cancelled");
  EXPECT_EQ(result_column("state", "CXL-0002"), "cancelled");
  EXPECT_NE(result_column("cancelled_at", "CXL-0002"), "");
  EXPECT_EQ(orders.at("CXL-0003").recipient->address->address1, "3 Main Street");
  EXPECT_EQ(result_column("state", "CXL-0003"), "created");
  EXPECT_THAT(result_column("note", "CXL-0003"), HasSubstr("cannot apply"));
  EXPECT_THAT(result.stderr_text, HasSubstr("CXL-0003 changed at the merchant after it was sent"));
  EXPECT_EQ(creates().first, 2);
}

TEST_F(PushSyncTest, RefusedCredentialsPauseTheJobAndRaiseTheAlarm) {
  ASSERT_NO_FATAL_FAILURE(start_sandbox_with_revocable_token_and_metrics());
  insert_orders("AUTH", 2);
  std::uint16_t port = 0;
  const auto daemon_run = start_daemon(port);
  ChildProcess& running = *daemon_run;
  ASSERT_NE(port, 0) << running.stderr_text();
  ASSERT_TRUE(running.wait_for_stderr("provider http", 20s)) << running.stderr_text();
  for (int i = 0; i < 200 && result_column_if_any("state", "AUTH-0002") != "created"; ++i) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(result_column("state", "AUTH-0002"), "created");

  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/reset").status, 200);
  insert_order("AUTH-0003", 3);
  ASSERT_TRUE(running.wait_for_stderr("push_orders: paused", 20s)) << running.stderr_text();
  const auto metrics = http_get("127.0.0.1", port, "/metrics").body;
  EXPECT_THAT(metrics, HasSubstr("fulfillsync_job_paused{sync_job=\"push_orders\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("fulfillsync_ledger_entries{kind=\"order_create\",state=\"pending\"}"));
  running.send_signal(SIGTERM);
  EXPECT_EQ(running.wait_for_exit(20s), 0);
  // Not sent, not lost: it waits in the ledger for the next start.
  const auto status = daemon({"status"});
  EXPECT_THAT(status.stdout_text, HasSubstr("Oldest entry waiting to be sent"));
  EXPECT_EQ(result_column("state", "AUTH-0003"), "pending");
  EXPECT_THAT(running.stderr_text(), ::testing::Not(HasSubstr("revocable-token")));  // the token never reaches logs
}

TEST_F(PushSyncTest, HistoryBeforeTheStartingPointIsNeverPushedAndDryRunSendsNothing) {
  start_sandbox();
  insert_order("OLD-1", 1, "2019-06-01T00:00:00.000Z");
  insert_orders("NEW", 2);
  auto dry = daemon({"--dry-run", "once"});
  EXPECT_EQ(dry.exit_status, 0) << dry.stderr_text;
  EXPECT_THAT(dry.stdout_text, HasSubstr("2 orders would be created"));
  EXPECT_THAT(dry.stderr_text, HasSubstr("NEW-0001 would be created"));
  EXPECT_THAT(dry.stderr_text, HasSubstr("(redacted)"));
  EXPECT_THAT(dry.stderr_text, ::testing::Not(HasSubstr("Customer 1")));  // personal data stays out of logs
  EXPECT_EQ(creates().first, 0);
  EXPECT_FALSE(std::filesystem::exists(dir / "checkpoint.db"));

  ASSERT_EQ(once().exit_status, 0);
  const auto orders = provider_orders();
  EXPECT_EQ(orders.size(), 2u);
  EXPECT_FALSE(orders.contains("OLD-1"));
}

// One create answered 503 (unclear: it may have been processed); the merchant corrects the address a
// second later. The lookup finds the order absent, so it is sent again: as the merchant last wrote
// it, with no note claiming a change after creation. The same for a return.
TEST_F(PushSyncTest, AfterAnUnclearCreateTheRowIsSentAsTheMerchantLastWroteIt) {
  start_sandbox();
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults", "route=POST /*/order;503=1|route=POST /*/return;503=1").status,
            200);
  insert_orders("FIX", 1);
  insert_returns("RFIX", 1);
  auto running = run_in_background();
  ASSERT_TRUE(wait_for_sandbox_count("503", 2, 20s)) << running->stderr_text();
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults", "").status, 200);
  std::this_thread::sleep_for(1s);
  execute("UPDATE fulfillsync_orders SET address1 = '9 Corrected Road' WHERE reference_id = 'FIX-0001'");
  execute("UPDATE fulfillsync_returns SET tracking_number = '1ZCORRECTED' WHERE reference_id = 'RFIX-001'");
  EXPECT_TRUE(wait_for_result("FIX-0001", "created", 30s)) << running->stderr_text();
  EXPECT_TRUE(wait_for_result("RFIX-001", "created", 30s, "fulfillsync_return_sync")) << running->stderr_text();
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();

  const auto orders = provider_orders();
  ASSERT_TRUE(orders.contains("FIX-0001"));
  EXPECT_EQ(orders.at("FIX-0001").recipient->address->address1, "9 Corrected Road");
  EXPECT_EQ(result_column("note", "FIX-0001"), "");
  const auto returns = provider_returns();
  ASSERT_TRUE(returns.contains("RFIX-001"));
  EXPECT_EQ(returns.at("RFIX-001").tracking_number, "1ZCORRECTED");
  EXPECT_EQ(result_column("note", "RFIX-001", "fulfillsync_return_sync"), "");
  EXPECT_EQ(creates(), std::make_pair(1L, 1L));
}

// A kill in the middle of a backlog leaves in flight only the sends that were leaving (at most the
// job's concurrency, and as many marked with them because they were due next), and after the restart
// the rest go out at once: only those few wait for the lookup, which counts from their send time.
// Under a backlog the intake stops reading, so a waiting create's body is read again before it is
// sent. When that read finds new versions, they move to the back of the queue: the entries that take
// their place in the chunk were not read again, and wait for the next chunk rather than go out stale.
TEST_F(PushSyncTest, EveryBodyOfAChunkIsReadAgainAfterItWaitedEvenWhenTheChunkChanges) {
  start_sandbox();
  std::string config = read_file(config_path);
  config.replace(config.find("batch_size: 100"), 15, "batch_size: 10");
  write_file(config_path, config);
  insert_orders("STALE", 60);
  ASSERT_EQ(once({"FULFILLSYNC_FAILPOINTS=push_orders.before_send"}).exit_status, kKilled);
  ASSERT_GE(ledger_count("pending"), 40);  // four chunks: the intake stops reading
  std::this_thread::sleep_for(2100ms);     // every body waited longer than a send may use it unread
  execute("UPDATE fulfillsync_orders SET recipient_name = recipient_name || ' (edited)'");

  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  const auto orders = provider_orders();
  for (int i = 1; i <= 60; ++i) {
    const std::string reference = fmt::format("STALE-{:04}", i);
    ASSERT_TRUE(orders.contains(reference)) << reference;
    EXPECT_THAT(orders.at(reference).recipient->name.value_or(""), ::testing::EndsWith(" (edited)")) << reference;
  }
}

// At a low rate budget a chunk takes many seconds to leave: one read again is cut to what leaves
// within about two seconds, so no body goes out long after its row was read (60 a minute, one at a
// time: two a chunk, where a whole chunk would be ten; the budget's burst of ten spent, sends leave
// a second apart).
TEST_F(PushSyncTest, ABodyReadAgainLeavesSoonAfterItsReadAtALowRateBudget) {
  start_sandbox();
  std::string config = read_file(config_path);
  config.replace(config.find("requests_per_minute: 100000"), 27, "requests_per_minute: 60");
  config.replace(config.find("concurrency: 4"), 14, "concurrency: 1");
  write_file(config_path, config);
  insert_orders("SLOW", 16);
  ASSERT_EQ(once({"FULFILLSYNC_FAILPOINTS=push_orders.before_send"}).exit_status, kKilled);
  std::this_thread::sleep_for(2100ms);

  const auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  SQLite::Database store((dir / "checkpoint.db").string(), SQLite::OPEN_READONLY);
  SQLite::Statement query(store, "SELECT source_key, (julianday(sent_at) - julianday(read_at)) * 86400 FROM "
                                 "outbound_ledger WHERE kind = 'order_create'");
  int sent = 0;
  while (query.executeStep()) {
    ++sent;
    // The second of a chunk leaves about 1 s after the read; the last of a whole chunk of ten,
    // past the burst, would leave 5 s or more after it.
    EXPECT_LT(query.getColumn(1).getDouble(), 4.0) << query.getColumn(0).getString();
  }
  EXPECT_EQ(sent, 16);
}

TEST_F(PushSyncTest, AKillDuringABacklogDelaysOnlyWhatWasInFlight) {
  start_sandbox();
  std::string config = read_file(config_path);
  config.replace(config.find("request_timeout: 5s"), 19, "request_timeout: 20s");
  write_file(config_path, config);
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults", "route=POST /*/order;latency_ms=100").status, 200);
  insert_orders("BACKLOG", 100);
  auto running = run_in_background();
  for (const auto deadline = std::chrono::steady_clock::now() + 30s; creates().first < 20;) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << running->stderr_text();
    std::this_thread::sleep_for(10ms);
  }
  running->send_signal(SIGKILL);
  ASSERT_EQ(running->wait_for_exit(10s), kKilled);
  ASSERT_LT(creates().first, 100) << "the kill came too late to test anything";
  // push_orders runs 4 sends at a time, and a mark covers the sends due within a quarter second at
  // the pace they leave (the budget is unbounded here): 4 every 100 ms, up to about twice that as the
  // first answers come, so 20 ahead at most. Nothing else of the chunk of 100 may be in flight.
  constexpr int kMayBeInFlight = 4 + 20;
  EXPECT_LE(ledger_count("in_flight"), kMayBeInFlight);
  EXPECT_GE(ledger_count("pending"), 100 - creates().first - kMayBeInFlight);

  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults", "").status, 200);
  const auto restarted = std::chrono::steady_clock::now();
  running = run_in_background();
  // The orders never sent go out without waiting for any lookup (20 s); the interrupted ones follow
  // once request_timeout has passed since they were sent.
  const auto all_but_interrupted = [&] { return count("SELECT count(*) FROM fulfillsync_order_sync WHERE state = "
                                                      "'created'") >= 100 - kMayBeInFlight; };
  while (!all_but_interrupted() && std::chrono::steady_clock::now() < restarted + 15s) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(all_but_interrupted()) << running->stderr_text();
  for (int i = 1; i <= 100; ++i) {
    const std::string reference = fmt::format("BACKLOG-{:04}", i);
    const auto left = restarted + 25s - std::chrono::steady_clock::now();
    EXPECT_TRUE(wait_for_result(reference, "created",
                                std::max(std::chrono::duration_cast<std::chrono::milliseconds>(left), 0ms)))
        << reference << " not created within request_timeout + 5 s of the restart\n"
        << running->stderr_text();
  }
  running->send_signal(SIGTERM);
  EXPECT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();
  expect_orders_delivered("BACKLOG", 100);
  EXPECT_EQ(creates().first, 100);
}

// A cancel whose answer is lost is settled by reading the order: applied (Cancelled) means done,
// and only a cancel that never arrived is sent again. The provider processes each cancel once.
TEST_F(PushSyncTest, AnUnclearCancelIsSettledByReadingTheOrderAndProcessedOnce) {
  start_sandbox();
  insert_orders("UCXL", 2);
  ASSERT_EQ(once().exit_status, 0);
  auto running = run_in_background();

  // Processed, then the answer dropped.
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults", "route=POST /*/order/*;drop_after=1").status, 200);
  request_cancel("UCXL-0001");
  ASSERT_TRUE(wait_for_sandbox_count("drop_after", 1, 20s)) << running->stderr_text();
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults", "").status, 200);
  EXPECT_TRUE(wait_for_result("UCXL-0001", "cancelled", 30s)) << running->stderr_text();

  // Dropped before it was processed: read as not cancelled, so sent again.
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults", "route=POST /*/order/*;drop_before=1").status, 200);
  request_cancel("UCXL-0002");
  ASSERT_TRUE(wait_for_sandbox_count("drop_before", 1, 20s)) << running->stderr_text();
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults", "").status, 200);
  EXPECT_TRUE(wait_for_result("UCXL-0002", "cancelled", 30s)) << running->stderr_text();
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();

  const auto processed = cancels_processed();
  EXPECT_EQ(processed.at("UCXL-0001"), 1);
  EXPECT_EQ(processed.at("UCXL-0002"), 1);
  const auto orders = provider_orders();
  EXPECT_EQ(orders.at("UCXL-0001").status, "Cancelled");
  EXPECT_EQ(orders.at("UCXL-0002").status, "Cancelled");
}

// Reading by updated_at: source tables without the change log (with it, updated_at decides nothing).
class FutureRowsTest : public PushSyncTest {
 protected:
  void SetUp() override {
    PushSyncTest::SetUp();
    drop_change_log();
  }

  // Waits for the result row of `reference` to reach `state` (the daemon runs beside the test).
  bool wait_for(const std::string& reference, std::string_view state,
                std::string_view table = "fulfillsync_order_sync") {
    return wait_for_result(reference, state, 20s, table);
  }

  // The clock, as the merchant's application writes updated_at, moved by `offset` ("+60 seconds").
  std::string merchant_now(std::string_view offset = "+0 seconds") {
    SQLite::Statement query(*merchant, "SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?)");
    query.bind(1, std::string(offset));
    query.executeStep();
    return query.getColumn(0).getString();
  }
};

// A row dated 9999-12-31 used to carry the read position there, and every order written after it
// was never read.
TEST_F(FutureRowsTest, ARowDatedFarAheadIsRejectedWithItsReasonAndHoldsNothingUp) {
  ASSERT_NO_FATAL_FAILURE(start_sandbox_with_revocable_token_and_metrics());
  constexpr const char* kFarAhead = "9999-12-31T23:59:59.999Z";
  insert_order("EARLY-0001", 1);
  insert_order("FUTURE-0001", 2, kFarAhead);
  insert_return(*merchant, "RMA-FUTURE", 1);
  execute(fmt::format("UPDATE fulfillsync_returns SET updated_at = '{}' WHERE reference_id = 'RMA-FUTURE'", kFarAhead));
  std::uint16_t port = 0;
  const auto daemon_run = start_daemon(port);
  ChildProcess& running = *daemon_run;
  ASSERT_NE(port, 0) << running.stderr_text();

  ASSERT_TRUE(wait_for("EARLY-0001", "created")) << running.stderr_text();
  ASSERT_TRUE(wait_for("FUTURE-0001", "rejected")) << running.stderr_text();
  ASSERT_TRUE(wait_for("RMA-FUTURE", "rejected", "fulfillsync_return_sync")) << running.stderr_text();
  const std::string reason = fmt::format("updated_at is in the future: '{}' is more than 5m ahead of this server's "
                                         "clock",
                                         kFarAhead);
  EXPECT_THAT(result_column("last_error", "FUTURE-0001"), HasSubstr(reason));
  EXPECT_THAT(result_column("last_error", "RMA-FUTURE", "fulfillsync_return_sync"), HasSubstr(reason));
  EXPECT_TRUE(running.wait_for_stderr("order FUTURE-0001 rejected: " + reason, 5s)) << running.stderr_text();

  // Rows written after it are read; so is one from an application server whose clock runs a minute ahead.
  insert_order("LATER-0001", 3);
  insert_order("AHEAD-0001", 4, merchant_now("+60 seconds"));
  insert_return(*merchant, "RMA-LATER", 2);
  EXPECT_TRUE(wait_for("LATER-0001", "created")) << running.stderr_text();
  EXPECT_TRUE(wait_for("AHEAD-0001", "created")) << running.stderr_text();
  EXPECT_TRUE(wait_for("RMA-LATER", "created", "fulfillsync_return_sync")) << running.stderr_text();

  // Counted once each, however often they are read again; and shown by status.
  const auto metrics = http_get("127.0.0.1", port, "/metrics").body;
  EXPECT_THAT(metrics, HasSubstr("fulfillsync_source_rows_ahead_of_clock_total{kind=\"order_create\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("fulfillsync_source_rows_ahead_of_clock_total{kind=\"return_create\"} 1\n"));
  const auto status = daemon({"status"});
  EXPECT_EQ(status.exit_status, 0) << status.stderr_text;  // the daemon runs, its jobs succeed
  EXPECT_THAT(status.stdout_text, HasSubstr("running, PID " + std::to_string(running.pid())));
  EXPECT_THAT(status.stdout_text, HasSubstr("order FUTURE-0001"));
  EXPECT_THAT(status.stdout_text, HasSubstr(reason));

  // Corrected, they are created.
  execute(fmt::format("UPDATE fulfillsync_orders SET updated_at = '{}' WHERE reference_id = 'FUTURE-0001'",
                      merchant_now()));
  execute(fmt::format("UPDATE fulfillsync_returns SET updated_at = '{}' WHERE reference_id = 'RMA-FUTURE'",
                      merchant_now()));
  EXPECT_TRUE(wait_for("FUTURE-0001", "created")) << running.stderr_text();
  EXPECT_TRUE(wait_for("RMA-FUTURE", "created", "fulfillsync_return_sync")) << running.stderr_text();
  EXPECT_EQ(result_column("last_error", "FUTURE-0001"), "");
  running.send_signal(SIGTERM);
  EXPECT_EQ(running.wait_for_exit(20s), 0);
  EXPECT_EQ(provider_orders().size(), 4u);
  EXPECT_EQ(creates(), std::make_pair(4L, 2L));
}

// A row a little further ahead than max_clock_skew (5m) is taken once the clock reaches it, with
// nothing else written to wake the daemon.
TEST_F(FutureRowsTest, ARowAheadIsTakenOnceTheClockReachesIt) {
  start_sandbox();
  insert_order("SOON-0001", 1, merchant_now("+306 seconds"));
  auto running = run_in_background();
  ASSERT_TRUE(wait_for("SOON-0001", "rejected")) << running->stderr_text();
  EXPECT_THAT(result_column("last_error", "SOON-0001"), HasSubstr("is more than 5m ahead of this server's clock"));
  EXPECT_TRUE(wait_for("SOON-0001", "created")) << running->stderr_text();
  running->send_signal(SIGTERM);
  EXPECT_EQ(running->wait_for_exit(20s), 0);
}

// A read position that such a row moved before this was fixed is not trusted: reading starts again
// from the starting point, and what was sent already is not sent again.
TEST_F(FutureRowsTest, AReadPositionAheadOfTheClockIsReadAgainFromTheStart) {
  start_sandbox();
  insert_orders("SENT", 2);
  ASSERT_EQ(once().exit_status, 0);
  {
    SQLite::Database checkpoint((dir / "checkpoint.db").string(), SQLite::OPEN_READWRITE);
    ASSERT_EQ(checkpoint.exec("UPDATE cursors SET position = '24:9999-12-31T23:59:59.999ZSENT-0002' "
                              "WHERE job = 'source:fulfillsync_orders'"),
              1);
  }
  insert_order("LOST-0001", 3);
  const auto result = once();
  EXPECT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr("reading again from the starting point"));
  EXPECT_EQ(result_column("state", "LOST-0001"), "created");
  EXPECT_EQ(creates().first, 3);
}

// A reference id is printed escaped where it is not printable text, in the log and in status.
TEST_F(PushSyncTest, KeysTheProviderCannotBeTrustedWithAreRejectedAndPrintedEscaped) {
  start_sandbox();
  insert_order("OK-0001", 1);
  insert_order("  ", 2);
  insert_order(" PAD-0001", 3);
  insert_order("BAD-\xff", 4);
  const auto result = once();
  EXPECT_EQ(result.exit_status, kRowsStayRejected) << result.stderr_text;
  EXPECT_EQ(result_column("state", "OK-0001"), "created");
  EXPECT_THAT(result_column("last_error", "  "), HasSubstr("reference_id is blank, found '  '"));
  EXPECT_THAT(result_column("last_error", " PAD-0001"), HasSubstr("reference_id must not begin or end with white space"));
  EXPECT_THAT(result_column("last_error", "BAD-\xff"),
              HasSubstr("reference_id is not valid UTF-8 text, found 'BAD-\\xff'"));
  EXPECT_EQ(creates().first, 1);
  EXPECT_THAT(result.stderr_text, HasSubstr("order BAD-\\xff rejected"));
  EXPECT_THAT(result.stderr_text, ::testing::Not(HasSubstr("\xff")));
  const auto status = daemon({"status"});
  EXPECT_THAT(status.stdout_text, HasSubstr("order BAD-\\xff"));
  EXPECT_THAT(status.stdout_text, ::testing::Not(HasSubstr("\xff")));
}

}  // namespace
}  // namespace fulfillsync::testing
