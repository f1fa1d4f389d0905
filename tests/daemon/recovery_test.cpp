// State recovery end to end (sync_fixture.hpp): a checkpoint store restored from an older backup,
// deleted, or corrupted, with the merchant application writing meanwhile. In every case each
// eligible order exists once at the provider, each cancel is applied once, no create is refused as
// a duplicate, and the result tables say what is true.
#include <sched.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

class RecoveryTest : public SyncFixture {
 protected:
  std::filesystem::path store() const { return dir / "checkpoint.db"; }

  // A consistent copy of the store, as `sqlite3 checkpoint.db ".backup FILE"` takes it.
  void back_up_store(const std::filesystem::path& to) {
    SQLite::Database db(store().string(), SQLite::OPEN_READONLY);
    db.backup(to.c_str(), SQLite::Database::Save);
  }

  // The daemon stopped, `from` is put in place of the store.
  void restore_store(const std::filesystem::path& from) {
    for (const char* side : {"-wal", "-shm"}) std::filesystem::remove(store().string() + side);
    std::filesystem::copy_file(from, store(), std::filesystem::copy_options::overwrite_existing);
  }

  void delete_store() {
    for (const char* side : {"", "-wal", "-shm"}) std::filesystem::remove(store().string() + side);
  }

  // Bytes of the store overwritten past its first page, as a failing disk or a bad copy leaves it.
  void corrupt_store() {
    std::fstream file(store(), std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(file);
    file.seekp(4096);
    const std::string garbage(8192, '\xA5');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }

  // The merchant application at work while the daemon runs: `count` new orders in small
  // transactions, then a cancel of one of them once the daemon has created it (cancelled before, it
  // would rightly never be sent).
  void write_while_running(const std::string& prefix, int count, const std::string& cancel) {
    for (int i = 1; i <= count; ++i) {
      SQLite::Transaction transaction(*merchant);  // an order with its lines, as a shop commits it
      insert_order(fmt::format("{}-{:04}", prefix, i), i);
      transaction.commit();
      if (i % 5 == 0) std::this_thread::sleep_for(30ms);
    }
    ASSERT_TRUE(wait_for_result(cancel, "created", 60s)) << cancel << ": " << result_column_if_any("state", cancel);
    request_cancel(cancel);
  }

  // Waits until every order of `prefix` has the result it should end in.
  void wait_until_settled(const std::string& prefix, int count, const std::set<std::string>& cancelled,
                          ChildProcess& running) {
    for (int i = 1; i <= count; ++i) {
      const std::string reference = fmt::format("{}-{:04}", prefix, i);
      ASSERT_TRUE(wait_for_result(reference, cancelled.contains(reference) ? "cancelled" : "created", 60s))
          << reference << ": " << result_column_if_any("state", reference) << "\n" << running.stderr_text();
    }
  }

  void expect_no_duplicate_create() { EXPECT_EQ(sandbox_count("duplicates_refused"), 0); }

  // The configuration with one push job switched off (`job`: push_orders, push_cancels), or as written.
  void switch_off(const std::string& job) {
    if (written_config_.empty()) written_config_ = read_file(config_path);
    std::string config = written_config_;
    const std::string line = job + ": {";
    const std::size_t at = config.find(line);
    config.insert(config.find('}', at), ", enabled: false");
    write_file(config_path, config);
  }
  void switch_all_on() { write_file(config_path, written_config_); }

  std::string written_config_;

  void expect_cancelled_once(const std::set<std::string>& cancelled) {
    const auto processed = cancels_processed();
    for (const auto& reference : cancelled) {
      EXPECT_EQ(processed.contains(reference) ? processed.at(reference) : 0, 1) << reference;
      EXPECT_EQ(result_column("state", reference), "cancelled") << reference;
      EXPECT_THAT(result_column("note", reference), Not(HasSubstr("never sent"))) << reference;
    }
  }
};

// The steps: 100 orders synced, a backup taken, 100 more synced, one of the later ones
// cancelled at the merchant; the older backup restored, then once, resync, once. The ledger of the
// backup has never heard of the cancelled order, which the provider has.
TEST_F(RecoveryTest, ACancelAfterAnOlderBackupIsRestoredReachesTheProvider) {
  start_sandbox();
  insert_orders("OLD", 100);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  back_up_store(dir / "backup.db");

  {
    SQLite::Transaction transaction(*merchant);
    for (int i = 1; i <= 100; ++i) insert_order(fmt::format("NEW-{:04}", i), i);
    transaction.commit();
  }
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  request_cancel("NEW-0042");

  restore_store(dir / "backup.db");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  result = daemon({"resync", "--since", "2020-01-01T00:00:00Z"});
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;

  expect_orders_delivered("OLD", 100);
  expect_orders_delivered("NEW", 100, {"NEW-0042"});
  expect_cancelled_once({"NEW-0042"});
  EXPECT_EQ(creates().first, 200);
}

// A cancel read from the change log, queued, and its entry deleted from the log, then lost with the
// store before it was sent: the older copy put back saved a position below what the log deleted. The
// daemon notices, reads the table again by updated_at, and the cancel goes out.
TEST_F(RecoveryTest, ACancelQueuedByAStoreSinceReplacedByAnOlderCopyIsSent) {
  start_sandbox();
  insert_orders("ORD", 20);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  back_up_store(dir / "backup.db");

  const std::string config = read_file(config_path);
  const std::string cancels = "push_cancels: {interval: 50ms}";
  std::string without_cancels = config;
  without_cancels.replace(without_cancels.find(cancels), cancels.size(),
                          "push_cancels: {interval: 50ms, enabled: false}");
  write_file(config_path, without_cancels);
  request_cancel("ORD-0005");
  // Reads the cancel and queues it without sending it; a new order's send makes that read durable
  // (its mark is a synced commit), so the log entry is deleted.
  insert_orders("LATE", 1);
  result = once();
  ASSERT_EQ(cancels_processed()["ORD-0005"], 0) << result.stderr_text;
  ASSERT_EQ(ledger_count("pending"), 1) << result.stderr_text;

  write_file(config_path, config);
  restore_store(dir / "backup.db");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr("the change log has deleted entries after position"));

  expect_orders_delivered("ORD", 20, {"ORD-0005"});
  expect_orders_delivered("LATE", 1);
  expect_cancelled_once({"ORD-0005"});
  EXPECT_EQ(creates().first, 21);
  expect_no_duplicate_create();
}

// A backup taken, then orders created, edited and cancelled after it, some synced before the store
// is replaced by the backup and some only while the daemon runs again, with the merchant writing.
TEST_F(RecoveryTest, AnOlderBackupRestoredWithOrdersCreatedEditedAndCancelledAfterIt) {
  start_sandbox();
  insert_orders("OLD", 50);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  back_up_store(dir / "backup.db");

  insert_orders("NEW", 60);
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  // After their creation: an edit the API cannot apply, and cancels of orders old and new.
  execute("UPDATE fulfillsync_orders SET recipient_name = 'Edited Later' WHERE reference_id = 'NEW-0007'");
  request_cancel("OLD-0003");
  request_cancel("NEW-0011");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  // The daemon stopped: a cancel it has not seen, and orders it has never sent, one edited since.
  request_cancel("NEW-0012");
  insert_orders("WAIT", 10);
  execute("UPDATE fulfillsync_orders SET recipient_name = 'Customer 4', order_number = '#4' WHERE reference_id = "
          "'WAIT-0004'");

  restore_store(dir / "backup.db");
  auto running = run_in_background();
  write_while_running("LIVE", 40, "LIVE-0013");
  const std::set<std::string> cancelled = {"OLD-0003", "NEW-0011", "NEW-0012", "LIVE-0013"};
  wait_until_settled("OLD", 50, cancelled, *running);
  wait_until_settled("NEW", 60, cancelled, *running);
  wait_until_settled("WAIT", 10, cancelled, *running);
  wait_until_settled("LIVE", 40, cancelled, *running);
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();

  expect_orders_delivered("OLD", 50, cancelled);
  expect_orders_delivered("WAIT", 10, cancelled);
  expect_orders_delivered("LIVE", 40, cancelled);
  // NEW-0007 keeps the content it was created with; its result says the edit was not applied.
  const auto orders = provider_orders();
  EXPECT_EQ(orders.at("NEW-0007").recipient->name, "Customer 7");
  EXPECT_THAT(result_column("note", "NEW-0007"), HasSubstr("changed at the merchant after it was sent"));
  for (int i = 1; i <= 60; ++i) {
    const std::string reference = fmt::format("NEW-{:04}", i);
    EXPECT_EQ(orders.at(reference).status, cancelled.contains(reference) ? "Cancelled" : "Processing") << reference;
    EXPECT_EQ(result_column("remote_id", reference), std::to_string(orders.at(reference).id)) << reference;
  }
  expect_cancelled_once(cancelled);
  EXPECT_EQ(creates().first, 160);
  expect_no_duplicate_create();
  EXPECT_THAT(running->stderr_text(), HasSubstr("rebuilt from the merchant's result tables"));
}

// The store deleted while the daemon is stopped: the next start adopts every created order from the
// result tables, checks them in reads of 250 ids, and sends no create for them.
TEST_F(RecoveryTest, ADeletedStoreIsRebuiltWithoutResendingCreates) {
  start_sandbox();
  insert_orders("ORD", 300);
  insert_returns("RMA", 20);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  request_cancel("ORD-0010");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;

  delete_store();
  request_cancel("ORD-0020");
  insert_orders("STOPPED", 5);
  const long requests_before = sandbox_count("requests_total");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr("300 orders and 20 returns adopted as created"));
  // Two reads of ids for the orders, one for the returns, five creates, one cancel, and the few
  // reads a once run makes anyway: nothing near one request per order.
  EXPECT_LE(sandbox_count("requests_total") - requests_before, 30) << result.stderr_text;

  auto running = run_in_background();
  write_while_running("LIVE", 30, "LIVE-0005");
  const std::set<std::string> cancelled = {"ORD-0010", "ORD-0020", "LIVE-0005"};
  wait_until_settled("LIVE", 30, cancelled, *running);
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();

  expect_orders_delivered("ORD", 300, cancelled);
  expect_orders_delivered("STOPPED", 5);
  expect_orders_delivered("LIVE", 30, cancelled);
  expect_cancelled_once(cancelled);
  EXPECT_EQ(creates(), std::make_pair(335L, 20L));
  EXPECT_EQ(provider_returns().size(), 20u);
  expect_no_duplicate_create();
}

// Creates queued (their results say pending) and then sent by the store since replaced, killed before
// it wrote their outcome. The older copy put back is behind the result tables (they hold rows it has
// never seen), so it looks such rows up by reference before sending anything: no create is refused
// as a duplicate.
TEST_F(RecoveryTest, ASendTheOlderStoreNeverKnewIsLookedUpBeforeAnyCreate) {
  start_sandbox();
  insert_orders("OLD", 5);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  back_up_store(dir / "backup.db");

  insert_orders("NEW", 5);
  switch_off("push_orders");  // read and queued (push_cancels reads the orders table too), not sent
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  ASSERT_EQ(result_column("state", "NEW-0003"), "pending");
  switch_all_on();
  result = once({"FULFILLSYNC_FAILPOINTS=push_orders.after_ledger_commit"});
  ASSERT_NE(result.exit_status, 0) << "the failpoint was not reached:\n" << result.stderr_text;
  ASSERT_EQ(creates().first, 10);

  restore_store(dir / "backup.db");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr("5 possible sends to look up by reference"));
  expect_orders_delivered("OLD", 5);
  expect_orders_delivered("NEW", 5);
  EXPECT_EQ(creates().first, 10);
  expect_no_duplicate_create();
}

// The same with rows read and sent in one go, killed before any of their results was written: the
// results say in_flight (written before the sends left), and the older copy looks them up.
TEST_F(RecoveryTest, ASendKilledBeforeItsFirstResultIsLookedUpByTheOlderStore) {
  start_sandbox();
  insert_orders("OLD", 5);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  back_up_store(dir / "backup.db");

  insert_orders("NEW", 5);
  switch_off("push_cancels");  // push_orders alone reads the orders table and writes the results
  result = once({"FULFILLSYNC_FAILPOINTS=push_orders.after_ledger_commit"});
  ASSERT_NE(result.exit_status, 0) << "the failpoint was not reached:\n" << result.stderr_text;
  ASSERT_EQ(creates().first, 10);
  switch_all_on();

  restore_store(dir / "backup.db");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  expect_orders_delivered("OLD", 5);
  expect_orders_delivered("NEW", 5);
  EXPECT_EQ(creates().first, 10);
  expect_no_duplicate_create();
}

// An older copy put back the moment the process that used the newer store died, a create of that
// process still under way at the provider: the older store waits the request timeout before it
// looks anything up, so it finds the order rather than sending it again.
TEST_F(RecoveryTest, ACreateStillUnderWayWhenAnOlderStoreStartsIsFoundNotSentAgain) {
  start_sandbox();
  insert_orders("OLD", 3);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  back_up_store(dir / "backup.db");

  insert_orders("NEW", 1);
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults", "route=POST /*/order;latency_ms=2000@1").status, 200);
  auto running = run_in_background();
  for (int i = 0; i < 200 && result_column_if_any("state", "NEW-0001") != "in_flight"; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(result_column_if_any("state", "NEW-0001"), "in_flight") << running->stderr_text();
  std::this_thread::sleep_for(300ms);  // the request has reached the provider, which takes 2 s over it
  running->send_signal(SIGKILL);
  ASSERT_EQ(running->wait_for_exit(10s), kKilled);
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/faults", "").status, 200);

  restore_store(dir / "backup.db");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr("is older than the merchant's result tables: waiting"));
  std::this_thread::sleep_for(2s);  // the request of the process killed has been handled by now
  expect_orders_delivered("OLD", 3);
  expect_orders_delivered("NEW", 1);
  EXPECT_EQ(creates().first, 4);
  expect_no_duplicate_create();
}

// An edit after a create the store forgot: the provider has the first version. The version sent
// after the edit is refused as a duplicate and its result says so; that result read back by a store
// restored once more keeps saying so once the lookup finds the order (the edit is not lost silently).
TEST_F(RecoveryTest, AnEditAfterACreateTheStoreForgotStaysReportedThroughAnotherRestore) {
  start_sandbox();
  insert_orders("OLD", 3);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  back_up_store(dir / "backup.db");

  insert_orders("NEW", 1);
  result = once({"FULFILLSYNC_FAILPOINTS=push_orders.after_ledger_commit"});
  ASSERT_NE(result.exit_status, 0) << "the failpoint was not reached:\n" << result.stderr_text;
  ASSERT_EQ(creates().first, 4);
  restore_store(dir / "backup.db");
  execute("UPDATE fulfillsync_orders SET recipient_name = 'Edited Later' WHERE reference_id = 'NEW-0001'");
  // Killed once the order is looked up, before the ledger records what the lookup found.
  result = once({"FULFILLSYNC_FAILPOINTS=push_orders.after_reconcile_lookup"});
  ASSERT_NE(result.exit_status, 0) << "the failpoint was not reached:\n" << result.stderr_text;
  restore_store(dir / "backup.db");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;

  expect_orders_delivered("OLD", 3);
  const auto orders = provider_orders();
  ASSERT_TRUE(orders.contains("NEW-0001"));
  EXPECT_EQ(orders.at("NEW-0001").recipient->name, "Customer 1");
  EXPECT_EQ(result_column("state", "NEW-0001"), "created");
  EXPECT_EQ(result_column("remote_id", "NEW-0001"), std::to_string(orders.at("NEW-0001").id));
  EXPECT_THAT(result_column("note", "NEW-0001"), AnyOf(HasSubstr("created at the provider by an earlier send"),
                                                      HasSubstr("changed at the merchant after it was sent")));
  EXPECT_EQ(creates().first, 4);
}

// A cancel queued and not sent when the store is lost: the result says cancelling, the provider
// shows the order open. The rebuild queues the cancel again from what it reads at the provider,
// without waiting for the orders table to be read again, and it is applied once.
TEST_F(RecoveryTest, ACancelTheResultRecordsAndTheProviderDoesNotShowIsQueuedByTheRebuild) {
  start_sandbox();
  insert_orders("ORD", 5);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  switch_off("push_cancels");
  request_cancel("ORD-0002");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  ASSERT_EQ(result_column("state", "ORD-0002"), "cancelling");

  delete_store();
  result = daemon({"recover-store"});
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stdout_text, HasSubstr("1 cancels the provider does not show sent again"));
  EXPECT_EQ(ledger_count("pending"), 1);

  switch_all_on();
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  expect_orders_delivered("ORD", 5, {"ORD-0002"});
  expect_cancelled_once({"ORD-0002"});
  expect_no_duplicate_create();
}

// Tracking marks queued in a store, sent and written to the merchant's rows by the store that
// replaced it; that older copy put back does not send them again: the merchant's rows no longer list
// them as to be marked. (Marks it had in flight are looked up at the provider, as after any kill.)
TEST_F(RecoveryTest, TrackingMarkedByAStoreSinceReplacedIsNotMarkedAgain) {
  start_sandbox();
  const std::string shipments = "    pull_shipments: {interval: 50ms}\n";
  write_config("", shipments + "    mark_tracking: {mode: never}\n");
  insert_orders("ORD", 60);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/clock/advance?seconds=7200").status, 200);  // shipped
  result = once();  // the shipments and their tracking in the merchant database, nothing marked
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  write_config("", shipments + "    mark_tracking: {interval: 50ms, batch_size: 50}\n");
  // 60 marks queued, a batch of 50 in flight: killed before it leaves; 10 left pending.
  result = once({"FULFILLSYNC_FAILPOINTS=mark_tracking.before_send"});
  ASSERT_EQ(result.exit_status, kKilled) << "the failpoint was not reached:\n" << result.stderr_text;
  back_up_store(dir / "backup.db");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  expect_shipments_synced(60);

  restore_store(dir / "backup.db");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  expect_shipments_synced(60);
  expect_no_mark_without_merchant_tracking();
}

// A corrupted store stops the daemon with exit 74 and one message naming the file and the way out;
// recover-store moves it aside, rebuilds the store and says what it adopted.
TEST_F(RecoveryTest, ACorruptedStoreIsRecoveredWithRecoverStore) {
  start_sandbox();
  insert_orders("ORD", 120);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  corrupt_store();

  result = once();
  EXPECT_EQ(result.exit_status, 74) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr(store().string() + " is damaged"));
  EXPECT_THAT(result.stderr_text, HasSubstr("recover-store"));
  request_cancel("ORD-0007");  // the merchant goes on meanwhile
  insert_orders("LATER", 5);

  result = daemon({"recover-store"});
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stdout_text, HasSubstr("moved " + store().string() + " aside to "));
  EXPECT_THAT(result.stdout_text, HasSubstr("120 orders and 0 returns adopted as created"));
  EXPECT_THAT(result.stdout_text, HasSubstr("120 found, 0 missing"));
  bool kept_aside = false;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "")) {
    kept_aside = kept_aside || entry.path().filename().string().starts_with("checkpoint.db.damaged-");
  }
  EXPECT_TRUE(kept_aside);

  auto running = run_in_background();
  write_while_running("LIVE", 20, "LIVE-0002");
  const std::set<std::string> cancelled = {"ORD-0007", "LIVE-0002"};
  wait_until_settled("ORD", 120, cancelled, *running);
  wait_until_settled("LATER", 5, cancelled, *running);
  wait_until_settled("LIVE", 20, cancelled, *running);
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();

  expect_orders_delivered("ORD", 120, cancelled);
  expect_orders_delivered("LATER", 5);
  expect_orders_delivered("LIVE", 20, cancelled);
  expect_cancelled_once(cancelled);
  EXPECT_EQ(creates().first, 145);
  expect_no_duplicate_create();
}

// An order cancelled at the provider by someone else (or by a send whose record a restored store lost)
// is read before the merchant's cancel leaves, and recorded as cancelled without a second request.
TEST_F(RecoveryTest, AnOrderAlreadyCancelledAtTheProviderIsNotCancelledAgain) {
  start_sandbox();
  insert_orders("ORD", 3);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  const std::string id = result_column("remote_id", "ORD-0002");
  const auto channel = api_get("/channel");
  const std::size_t at = channel.body.find("\"id\":");
  ASSERT_NE(at, std::string::npos) << channel.body;
  const std::string channel_id = std::to_string(std::stol(channel.body.substr(at + 5)));
  const auto cancelled = http_request(
      "127.0.0.1", sandbox->port(), "POST", fmt::format("/2026-07/order/{}:cancel", id),
      {{"Authorization", std::string("Bearer ") + Sandbox::kToken}, {"service_channel_id", channel_id}});
  ASSERT_EQ(cancelled.status, 200) << cancelled.body;

  request_cancel("ORD-0002");
  request_cancel("ORD-0003");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  expect_orders_delivered("ORD", 3, {"ORD-0002", "ORD-0003"});
  expect_cancelled_once({"ORD-0002", "ORD-0003"});
  EXPECT_THAT(result.stderr_text, HasSubstr("ORD-0002: already cancelled at the provider"));
}

// `backup FILE` beside a running daemon: a consistent copy that a later start can use.
TEST_F(RecoveryTest, BackupCopiesTheStoreBesideARunningDaemon) {
  start_sandbox();
  insert_orders("ORD", 30);
  auto running = run_in_background();
  ASSERT_TRUE(wait_for_result("ORD-0030", "created", 30s)) << running->stderr_text();
  const auto result = daemon({"backup", (dir / "copy.db").string()});
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_THAT(result.stdout_text, HasSubstr("30 ledger entries, newest transition 20"));
  struct stat info{};
  ASSERT_EQ(stat((dir / "copy.db").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();
  SQLite::Database copy((dir / "copy.db").string(), SQLite::OPEN_READONLY);
  EXPECT_EQ(copy.execAndGet("PRAGMA quick_check").getString(), "ok");
  EXPECT_EQ(copy.execAndGet("SELECT count(*) FROM outbound_ledger WHERE state = 'created'").getInt(), 30);
}

// The disk under the checkpoint store fills up while orders arrive: the jobs' writes fail, and are
// logged and retried. Once there is room again the daemon goes on by itself, and every order
// arrives once. (A transaction SQLite had ended itself on the full disk used to leave the next
// abandoned one open, and every job failed until a restart; once that was mended, the orders of the
// intake's batch whose commit failed were skipped.)
TEST_F(RecoveryTest, AFullDiskUnderTheStoreHoldsTheSyncOnlyUntilThereIsRoomAgain) {
  // A small file system of the test's own, in a mount namespace of its own: gone with the process.
  if (::unshare(CLONE_NEWNS) != 0 || ::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    GTEST_SKIP() << "a mount namespace of its own needs root: " << std::strerror(errno);
  }
  const auto disk = dir / "disk";
  std::filesystem::create_directory(disk);
  ASSERT_EQ(::mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=16m"), 0) << std::strerror(errno);
  struct Unmount {
    std::filesystem::path at;
    ~Unmount() { ::umount2(at.c_str(), MNT_DETACH); }
  } unmount{disk};

  start_sandbox();
  std::string config = read_file(config_path);
  const std::string store_path = (dir / "checkpoint.db").string();
  config.replace(config.find(store_path), store_path.size(), (disk / "checkpoint.db").string());
  write_file(config_path, config);
  insert_orders("ROOM", 20);
  auto running = run_in_background();
  ASSERT_TRUE(wait_for_result("ROOM-0020", "created", 30s)) << running->stderr_text();

  const auto filler = disk / "filler";
  {
    std::FILE* file = std::fopen(filler.c_str(), "wb");
    ASSERT_NE(file, nullptr);
    const std::string block(1 << 16, 'x');
    while (std::fwrite(block.data(), 1, block.size(), file) == block.size() && std::fflush(file) == 0) {
    }
    std::fclose(file);
  }
  insert_orders("FULL", 300);
  EXPECT_TRUE(running->wait_for_stderr("disk is full", 30s)) << running->stderr_text();
  std::filesystem::remove(filler);

  EXPECT_TRUE(wait_for_results_created(320, 60s)) << running->stderr_text();
  running->send_signal(SIGTERM);
  ASSERT_EQ(running->wait_for_exit(20s), 0) << running->stderr_text();
  expect_orders_delivered("ROOM", 20);
  expect_orders_delivered("FULL", 300);
  EXPECT_EQ(creates().first, 320);
  EXPECT_THAT(running->stderr_text(), Not(HasSubstr("within a transaction")));
}

}  // namespace
}  // namespace fulfillsync::testing
