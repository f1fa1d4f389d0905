#include "fulfillsync/daemon/store/outbound_ledger.hpp"

#include <chrono>
#include <map>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <SQLiteCpp/Database.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include "fulfillsync/common/sqlite_migrations.hpp"
#include "fulfillsync/schema/migrations.hpp"
#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::daemon {
namespace {

using ::testing::HasSubstr;

constexpr auto kOrder = LedgerKind::order_create;

class OutboundLedgerTest : public ::testing::Test {
 protected:
  testing::TempDir dir;
  std::unique_ptr<CheckpointStore> store = std::make_unique<CheckpointStore>(dir / "checkpoint.db");
  OutboundLedger ledger{*store};

  LedgerState state_of(std::string_view key) { return ledger.find(kOrder, key).value().state; }
};

// When the body was last known to match its row: set by a new version and by a read that found the
// row unchanged, not by a send put back as pending (a throttled one), which moves updated_at.
TEST_F(OutboundLedgerTest, ABodysReadTimeMovesWithReadsNotWithASendPutBack) {
  ASSERT_EQ(ledger.offer(kOrder, "R-1", "hash1", "{}"), Offer::queued);
  const std::string offered = ledger.find(kOrder, "R-1")->read_at;
  ASSERT_FALSE(offered.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the store's times are milliseconds
  ledger.mark_in_flight(kOrder, "R-1");
  ledger.mark_pending(kOrder, "R-1", "throttled");
  auto entry = ledger.find(kOrder, "R-1");
  EXPECT_GT(entry->updated_at, offered);
  EXPECT_EQ(entry->read_at, offered);

  ledger.note_read(kOrder, "R-1");
  const std::string read_again = ledger.find(kOrder, "R-1")->read_at;
  EXPECT_GT(read_again, offered);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(ledger.offer(kOrder, "R-1", "hash2", "{\"v\":2}"), Offer::queued);
  EXPECT_GT(ledger.find(kOrder, "R-1")->read_at, read_again);
}

TEST_F(OutboundLedgerTest, ANewRowIsQueuedOnceWhateverHowOftenItIsRead) {
  EXPECT_EQ(ledger.offer(kOrder, "A-1", "hash1", R"({"reference_id":"A-1"})"), Offer::queued);
  EXPECT_EQ(ledger.offer(kOrder, "A-1", "hash1", R"({"reference_id":"A-1"})"), Offer::unchanged);
  const auto entry = ledger.find(kOrder, "A-1");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->state, LedgerState::pending);
  EXPECT_EQ(entry->body, R"({"reference_id":"A-1"})");
  EXPECT_EQ(entry->attempts, 0);
}

TEST_F(OutboundLedgerTest, TheHappyPathRecordsTheRemoteId) {
  ledger.offer(kOrder, "A-1", "h", "{}");
  ledger.mark_in_flight(kOrder, "A-1");
  EXPECT_EQ(state_of("A-1"), LedgerState::in_flight);
  ledger.mark_created(kOrder, "A-1", 4242, "Processing");
  const auto entry = ledger.find(kOrder, "A-1");
  EXPECT_EQ(entry->state, LedgerState::created);
  EXPECT_EQ(entry->remote_id, 4242);
  EXPECT_EQ(entry->attempts, 1);
  // The API cannot change a created order: a newer version is reported, not sent.
  EXPECT_EQ(ledger.offer(kOrder, "A-1", "h2", "{\"changed\":1}"), Offer::already_sent);
  EXPECT_EQ(ledger.find(kOrder, "A-1")->body, "{}");
  EXPECT_EQ(ledger.find(kOrder, "A-1")->remote_status, "Processing");
  EXPECT_THAT(ledger.find(kOrder, "A-1")->note, HasSubstr("cannot apply"));
  // Reported once: a re-read of the same version is quiet.
  EXPECT_EQ(ledger.offer(kOrder, "A-1", "h2", "{\"changed\":1}"), Offer::unchanged);
}

TEST_F(OutboundLedgerTest, InFlightIsDurableAndACrashLeavesItUnknown) {
  const auto path = dir / "crashed.db";
  {
    CheckpointStore crashed(path);
    OutboundLedger before(crashed);
    before.offer(kOrder, "A-1", "h", "{}");
    before.mark_in_flight(kOrder, "A-1");
  }  // The process dies here; a new one opens the same store.
  CheckpointStore store_again(path);
  OutboundLedger reopened(store_again);
  EXPECT_EQ(reopened.recover_interrupted(), 1);
  const auto entry = reopened.find(kOrder, "A-1");
  EXPECT_EQ(entry->state, LedgerState::unknown);
  EXPECT_EQ(entry->last_error, "interrupted while in flight");
  // Reconciliation either adopts the provider's order or sends the same body again.
  reopened.mark_pending(kOrder, "A-1", "not found at the provider");
  EXPECT_EQ(reopened.find(kOrder, "A-1")->body, "{}");
}

// The wait before an interrupted send is looked up counts from when it was sent, not from the
// restart: a crash loop must not push the lookup further away each time.
TEST_F(OutboundLedgerTest, AnInterruptedSendKeepsItsSendTime) {
  const auto path = dir / "crashed.db";
  std::string sent_at;
  {
    CheckpointStore crashed(path);
    OutboundLedger before(crashed);
    before.offer(kOrder, "A-1", "h", "{}");
    before.mark_in_flight(kOrder, "A-1");
    sent_at = before.find(kOrder, "A-1")->updated_at;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CheckpointStore store_again(path);
  OutboundLedger reopened(store_again);
  ASSERT_EQ(reopened.recover_interrupted(), 1);
  EXPECT_EQ(reopened.find(kOrder, "A-1")->updated_at, sent_at);
  EXPECT_EQ(reopened.find(kOrder, "A-1")->sent_at, sent_at);
  EXPECT_EQ(reopened.unclear(kOrder, std::chrono::milliseconds(10), 10).size(), 1u);
  EXPECT_TRUE(reopened.unclear(kOrder, std::chrono::hours(1), 10).empty());
}

TEST_F(OutboundLedgerTest, TheProvidersCreationTimeIsKept) {
  ledger.offer(kOrder, "A-1", "h", "{}");
  ledger.mark_in_flight(kOrder, "A-1");
  ledger.mark_created(kOrder, "A-1", 7, "Processing", "2026-03-01T12:00:00.000Z");
  EXPECT_EQ(ledger.find(kOrder, "A-1")->remote_created_at, "2026-03-01T12:00:00.000Z");
  ledger.offer(kOrder, "B-1", "h", "{}");
  ledger.mark_in_flight(kOrder, "B-1");
  ledger.mark_created(kOrder, "B-1", 8, "Processing");
  EXPECT_EQ(ledger.find(kOrder, "B-1")->remote_created_at, "");
}

TEST_F(OutboundLedgerTest, AnUnknownRowIsAdoptedWhenTheProviderHasIt) {
  ledger.offer(kOrder, "A-1", "h", "{}");
  ledger.mark_in_flight(kOrder, "A-1");
  ledger.mark_unknown(kOrder, "A-1", "waiting for the answer: timed out");
  // A changed version waits until the first send is settled.
  EXPECT_EQ(ledger.offer(kOrder, "A-1", "h2", "{}"), Offer::held);
  ledger.mark_created(kOrder, "A-1", 7, "Processing");
  EXPECT_EQ(ledger.find(kOrder, "A-1")->remote_id, 7);
}

TEST_F(OutboundLedgerTest, ARejectedRowWaitsForAFixOrARequeue) {
  ledger.offer(kOrder, "A-1", "h1", "{\"bad\":1}");
  ledger.mark_in_flight(kOrder, "A-1");
  ledger.mark_rejected(kOrder, "A-1", "recipient.name: required");
  EXPECT_EQ(ledger.offer(kOrder, "A-1", "h1", "{\"bad\":1}"), Offer::unchanged);  // not retried as it is
  EXPECT_EQ(ledger.find(kOrder, "A-1")->last_error, "recipient.name: required");

  // The merchant fixes the row: the new version is queued with its new body.
  EXPECT_EQ(ledger.offer(kOrder, "A-1", "h2", "{\"fixed\":1}"), Offer::queued);
  auto entry = ledger.find(kOrder, "A-1");
  EXPECT_EQ(entry->state, LedgerState::pending);
  EXPECT_EQ(entry->body, "{\"fixed\":1}");
  EXPECT_EQ(entry->attempts, 0);
  EXPECT_EQ(entry->last_error, "");

  ledger.mark_rejected(kOrder, "A-1", "still wrong");  // rejected locally, never sent
  EXPECT_TRUE(ledger.requeue(kOrder, "A-1"));
  EXPECT_EQ(state_of("A-1"), LedgerState::pending);
  EXPECT_FALSE(ledger.requeue(kOrder, "A-1"));  // only rejected rows are requeued
}

TEST_F(OutboundLedgerTest, BacklogAndOldestWaiting) {
  EXPECT_EQ(ledger.oldest_waiting_since(), std::nullopt);
  for (const char* key : {"A", "B", "C"}) ledger.offer(kOrder, key, "h", "{}");
  ledger.offer(LedgerKind::return_create, "R", "h", "{}");
  ledger.mark_in_flight(kOrder, "A");
  ledger.mark_created(kOrder, "A", 1, "Processing");
  ledger.mark_rejected(kOrder, "B", "bad");
  const auto counts = ledger.backlog();
  EXPECT_EQ(counts.at({kOrder, LedgerState::created}), 1);
  EXPECT_EQ(counts.at({kOrder, LedgerState::rejected}), 1);
  EXPECT_EQ(counts.at({kOrder, LedgerState::pending}), 1);
  EXPECT_EQ(counts.at({LedgerKind::return_create, LedgerState::pending}), 1);
  EXPECT_TRUE(ledger.oldest_waiting_since());
  EXPECT_EQ(ledger.in_state(kOrder, LedgerState::pending, 10).size(), 1u);
  EXPECT_EQ(ledger.requeue_all_rejected(), 1);
}

// A product is built from the catalog by push_products: a requeue makes its rejected entry forget
// its version (so that the job takes the product again), never resends it as it was.
TEST_F(OutboundLedgerTest, ARequeuedProductForgetsItsVersionAndStaysUnsent) {
  constexpr auto kProduct = LedgerKind::product_create;
  ledger.offer(kProduct, "P-1", "h1", "");  // failed the local rules: no body
  ledger.mark_rejected(kProduct, "P-1", "fulfillsync_variants sku 'P-1-1': status must be one of Active, Inactive");
  ledger.offer(kProduct, "P-2", "h2", R"({"name":"P"})");
  ledger.mark_in_flight(kProduct, "P-2");
  ledger.mark_rejected(kProduct, "P-2", "Taxonomy 9 does not exist.");
  ledger.offer(kOrder, "O-1", "h3", "{}");
  ledger.mark_in_flight(kOrder, "O-1");
  ledger.mark_rejected(kOrder, "O-1", "bad");

  EXPECT_TRUE(ledger.requeue(kProduct, "P-1"));
  const auto requeued = ledger.find(kProduct, "P-1");
  EXPECT_EQ(requeued->state, LedgerState::rejected);  // not sent as it is: taken again by the job
  EXPECT_EQ(requeued->content_hash, OutboundLedger::kVersionForgotten);
  EXPECT_EQ(ledger.rejected_at_version(kProduct, OutboundLedger::kVersionForgotten, 10),
            std::vector<std::string>{"P-1"});
  EXPECT_FALSE(ledger.requeue(LedgerKind::product_update, "P-1"));  // it has no rejected update

  // --rejected: orders are resent, products forget their versions.
  EXPECT_EQ(ledger.requeue_all_rejected(), 3);
  EXPECT_EQ(state_of("O-1"), LedgerState::pending);
  EXPECT_EQ(ledger.find(kProduct, "P-2")->state, LedgerState::rejected);
  EXPECT_EQ(ledger.rejected_at_version(kProduct, OutboundLedger::kVersionForgotten, 10),
            (std::vector<std::string>{"P-1", "P-2"}));
  EXPECT_TRUE(ledger.in_state(kProduct, LedgerState::pending, 10).empty());

  // The job offers the catalog's version: a requeued entry takes it like any changed version.
  EXPECT_EQ(ledger.offer(kProduct, "P-2", "h2", R"({"name":"P"})"), Offer::queued);
  EXPECT_EQ(ledger.find(kProduct, "P-2")->state, LedgerState::pending);
}

TEST_F(OutboundLedgerTest, AWithdrawnRowIsNeverSentUntilTheMerchantChangesIt) {
  ledger.withdraw(kOrder, "C-1", "h1", "cancelled before it was created");  // never seen before
  EXPECT_EQ(state_of("C-1"), LedgerState::withdrawn);
  EXPECT_EQ(ledger.offer(kOrder, "C-1", "h1", "{}"), Offer::unchanged);
  EXPECT_TRUE(ledger.in_state(kOrder, LedgerState::pending, 10).empty());
  ledger.offer(kOrder, "P-1", "h1", "{}");
  ledger.withdraw(kOrder, "P-1", "h2", "cancelled before it was created");
  EXPECT_EQ(state_of("P-1"), LedgerState::withdrawn);
  EXPECT_EQ(ledger.find(kOrder, "P-1")->content_hash, "h2");
  // The merchant takes the cancel back: a new version, sent as usual.
  EXPECT_EQ(ledger.offer(kOrder, "P-1", "h3", "{}"), Offer::queued);
}

TEST_F(OutboundLedgerTest, ResultsAreUnwrittenUntilMarkedAndABatchIsOneCommit) {
  {
    auto batch = ledger.batch();
    ledger.offer(kOrder, "A", "h", "{}");
    ledger.offer(kOrder, "B", "h", "{}");
    // Not committed: gone with the batch.
  }
  EXPECT_FALSE(ledger.find(kOrder, "A"));
  {
    auto batch = ledger.batch();
    ledger.offer(kOrder, "A", "h", "{}");
    ledger.offer(kOrder, "B", "h", "{}");
    batch.commit();
  }
  auto unwritten = ledger.unwritten_results(kOrder, 10);
  ASSERT_EQ(unwritten.size(), 2u);
  ledger.mark_results_written(unwritten);
  EXPECT_TRUE(ledger.unwritten_results(kOrder, 10).empty());
  ledger.mark_in_flight(kOrder, "A");  // not worth a result write of its own
  EXPECT_TRUE(ledger.unwritten_results(kOrder, 10).empty());
  ledger.mark_created(kOrder, "A", 9, "Processing");
  EXPECT_EQ(ledger.unwritten_results(kOrder, 10).size(), 1u);
}

// Counts the statements a connection runs (SQLite's trace hook), to check how the work scales.
class StatementCounter {
 public:
  explicit StatementCounter(SQLite::Database& db) : db_(db.getHandle()) {
    sqlite3_trace_v2(db_, SQLITE_TRACE_STMT, &StatementCounter::on_statement, &count_);
  }
  ~StatementCounter() { sqlite3_trace_v2(db_, 0, nullptr, nullptr); }
  int count() const { return count_; }

 private:
  static int on_statement(unsigned, void* count, void*, void* text) {
    // A trigger's run ("-- TRIGGER ...") is part of its statement, not one of its own.
    if (!std::string_view(static_cast<const char*>(text)).starts_with("--")) ++*static_cast<int*>(count);
    return 0;
  }
  sqlite3* db_;
  int count_ = 0;
};

TEST_F(OutboundLedgerTest, HashesAreLookedUpAPageOfKeysAtATime) {
  std::vector<std::string> keys;
  {
    auto batch = ledger.batch();
    for (int i = 0; i < 250; ++i) {
      keys.push_back(fmt::format("K-{:03}", i));
      // Every tenth key is not in the ledger, and an order's hash is not its cancel's.
      if (i % 10 != 0) ledger.offer(kOrder, keys.back(), fmt::format("h{}", i), "{}");
    }
    ledger.offer(LedgerKind::order_cancel, "K-000", "cancel", "");
    batch.commit();
  }
  StatementCounter statements(store->database());
  const auto found = ledger.hashes(kOrder, keys);
  EXPECT_EQ(statements.count(), 3);  // 250 keys, 100 a statement: not 250 statements
  ASSERT_EQ(found.size(), 225u);
  EXPECT_FALSE(found.contains("K-000"));
  EXPECT_EQ(found.at("K-001"), "h1");
  EXPECT_EQ(found.at("K-249"), "h249");
  EXPECT_TRUE(ledger.hashes(kOrder, {}).empty());
}

// A chunk's marks are a statement per page of keys, and each entry moves as a mark of its own would
// move it: in flight, one attempt more, its send time set, its result not made unwritten.
TEST_F(OutboundLedgerTest, SendsAreMarkedInFlightAPageOfKeysAtATime) {
  std::vector<std::string> keys;
  {
    auto batch = ledger.batch();
    for (int i = 0; i < 250; ++i) {
      keys.push_back(fmt::format("K-{:03}", i));
      ledger.offer(kOrder, keys.back(), "h", "{}");
    }
    ledger.offer(kOrder, "LEFT", "h", "{}");
    batch.commit();
  }
  ledger.mark_results_written(ledger.unwritten_results(kOrder, 1000));
  const std::vector<std::string_view> leaving(keys.begin(), keys.end());
  StatementCounter statements(store->database());
  ledger.mark_in_flight(kOrder, leaving);
  EXPECT_EQ(statements.count(), 3);  // 250 keys, 100 a statement
  for (const std::string& key : {keys.front(), keys[100], keys.back()}) {
    const LedgerEntry entry = ledger.find(kOrder, key).value();
    EXPECT_EQ(entry.state, LedgerState::in_flight) << key;
    EXPECT_EQ(entry.attempts, 1) << key;
    EXPECT_FALSE(entry.sent_at.empty()) << key;
  }
  EXPECT_EQ(state_of("LEFT"), LedgerState::pending);
  EXPECT_TRUE(ledger.unwritten_results(kOrder, 1000).empty());
}

// The note that result rows are written is a statement per page of entries, and leaves unwritten an
// entry that changed after it was read (its row holds the older state).
TEST_F(OutboundLedgerTest, ResultsAreNotedWrittenAPageAtATimeButNotAChangedEntry) {
  {
    auto batch = ledger.batch();
    for (int i = 0; i < 150; ++i) ledger.offer(kOrder, fmt::format("K-{:03}", i), "h", "{}");
    ledger.offer(LedgerKind::order_cancel, "K-000", "c", "");
    batch.commit();
  }
  std::vector<LedgerEntry> read = ledger.unwritten_results(kOrder, 1000);
  for (LedgerEntry& entry : ledger.unwritten_results(LedgerKind::order_cancel, 1000)) read.push_back(std::move(entry));
  ASSERT_EQ(read.size(), 151u);
  ledger.mark_rejected(kOrder, "K-007", "changed meanwhile");
  StatementCounter statements(store->database());
  ledger.mark_results_written(read);
  EXPECT_EQ(statements.count(), 2);  // 151 entries, 100 a statement
  const auto unwritten = ledger.unwritten_results(kOrder, 1000);
  ASSERT_EQ(unwritten.size(), 1u);
  EXPECT_EQ(unwritten.front().source_key, "K-007");
  EXPECT_TRUE(ledger.unwritten_results(LedgerKind::order_cancel, 1000).empty());
}

using OutboundLedgerDeathTest = OutboundLedgerTest;

TEST_F(OutboundLedgerDeathTest, AnImpossibleTransitionStopsTheProcess) {
  ledger.offer(kOrder, "A-1", "h", "{}");
  // Recording a create for a row that was never sent would hide a bug that can duplicate orders.
  EXPECT_DEATH(ledger.mark_created(kOrder, "A-1", 1, "Processing"), "cannot move to created");
}

TEST_F(OutboundLedgerDeathTest, MarkingAnEntryInFlightTwiceStopsTheProcess) {
  ledger.offer(kOrder, "A-1", "h", "{}");
  ledger.offer(kOrder, "A-2", "h", "{}");
  ledger.mark_in_flight(kOrder, "A-2");
  // Sent already (or being sent): marked again, it could leave twice.
  const std::vector<std::string_view> keys = {"A-1", "A-2"};
  EXPECT_DEATH(ledger.mark_in_flight(kOrder, keys), "1 of 2 order_create entries cannot move to in_flight");
}

// A cancel ends `applied`, a state of its own: `created` means the provider made an order or return.
TEST_F(OutboundLedgerTest, ACancelIsAppliedNotCreated) {
  constexpr auto kCancel = LedgerKind::order_cancel;
  ledger.offer(kCancel, "C-1", "h", "");
  ledger.mark_in_flight(kCancel, "C-1");
  ledger.mark_applied("C-1", 77, "Cancelled");
  const auto entry = ledger.find(kCancel, "C-1");
  EXPECT_EQ(entry->state, LedgerState::applied);
  EXPECT_EQ(entry->remote_status, "Cancelled");
  EXPECT_EQ(ledger.backlog().count({kCancel, LedgerState::created}), 0u);
  EXPECT_EQ(ledger.offer(kCancel, "C-1", "h2", ""), Offer::already_sent);
  // Adopted from the merchant's result table after a restore: applied too.
  EXPECT_TRUE(ledger.adopt(kCancel, "C-2", "h", 78, "Cancelled", "", ""));
  EXPECT_EQ(ledger.find(kCancel, "C-2")->state, LedgerState::applied);
  EXPECT_FALSE(ledger.adopt(kCancel, "C-2", "h", 78, "Cancelled", "", ""));
  EXPECT_DEATH(ledger.mark_created(kCancel, "C-1", 77, "Cancelled"), "a cancel is applied, not created");
}

// A product's update is applied once per version, and the next version is sent too: the API can
// change a product it has created (unlike an order).
TEST_F(OutboundLedgerTest, AProductUpdateIsAppliedAndTheNextVersionIsQueuedAgain) {
  constexpr auto kUpdate = LedgerKind::product_update;
  EXPECT_EQ(ledger.offer(kUpdate, "P-1", "v2", "{}"), Offer::queued);
  ledger.mark_in_flight(kUpdate, "P-1");
  EXPECT_EQ(ledger.offer(kUpdate, "P-1", "v3", "{}"), Offer::held);
  ledger.mark_applied(kUpdate, "P-1", 41, "");
  EXPECT_EQ(ledger.find(kUpdate, "P-1")->state, LedgerState::applied);
  EXPECT_EQ(ledger.offer(kUpdate, "P-1", "v3", R"({"v":3})"), Offer::queued);
  const auto entry = ledger.find(kUpdate, "P-1");
  EXPECT_EQ(entry->state, LedgerState::pending);
  EXPECT_EQ(entry->body, R"({"v":3})");
  EXPECT_EQ(entry->remote_id, 41);
  EXPECT_DEATH(ledger.mark_created(kUpdate, "P-1", 41, ""), "applied, not created");
  // A product's create is done when created, like an order's: a later version is not resent.
  ledger.offer(LedgerKind::product_create, "P-1", "v1", "{}");
  ledger.mark_in_flight(LedgerKind::product_create, "P-1");
  ledger.mark_created(LedgerKind::product_create, "P-1", 41, "");
  EXPECT_EQ(ledger.offer(LedgerKind::product_create, "P-1", "v2", "{}"), Offer::already_sent);
}

// SQLite's virtual machine steps of the statements that finish on `db` while `work` runs.
template <typename Work>
long vm_steps_of(SQLite::Database& db, Work work) {
  long steps = 0;
  sqlite3_trace_v2(
      db.getHandle(), SQLITE_TRACE_PROFILE,
      [](unsigned, void* total, void* statement, void*) {
        *static_cast<long*>(total) += sqlite3_stmt_status(static_cast<sqlite3_stmt*>(statement),
                                                          SQLITE_STMTSTATUS_VM_STEP, 1);
        return 0;
      },
      &steps);
  work();
  sqlite3_trace_v2(db.getHandle(), 0, nullptr, nullptr);
  return steps;
}

// The ledger keeps every entry it sent, and the progress report counts it every few seconds: the
// counts are kept as entries come, change state and go (by any connection), so counting costs the
// same with 100 entries or 20,000.
TEST_F(OutboundLedgerTest, CountingCostsTheSameHoweverManyEntriesTheLedgerKeeps) {
  SQLite::Database& db = store->database();
  const auto add_created = [&](int from, int to) {
    db.exec(fmt::format("WITH RECURSIVE n(i) AS (SELECT {} UNION ALL SELECT i + 1 FROM n WHERE i < {}) "
                        "INSERT INTO outbound_ledger (kind, source_key, content_hash, state, created_at, updated_at) "
                        "SELECT 'order_create', 'O-' || i, 'h', 'created', '2026-01-01T00:00:00.000Z', "
                        "'2026-01-01T00:00:00.000Z' FROM n",
                        from, to));
  };
  add_created(1, 100);
  ASSERT_EQ(ledger.offer(kOrder, "R-1", "h", "{}"), Offer::queued);
  ASSERT_EQ(ledger.offer(kOrder, "R-2", "h", "{}"), Offer::queued);
  ledger.mark_in_flight(kOrder, "R-2");
  std::map<std::pair<LedgerKind, LedgerState>, int> counts;
  const long few = vm_steps_of(db, [&] { counts = ledger.backlog(); });
  EXPECT_EQ(counts, (std::map<std::pair<LedgerKind, LedgerState>, int>{{{kOrder, LedgerState::created}, 100},
                                                                      {{kOrder, LedgerState::pending}, 1},
                                                                      {{kOrder, LedgerState::in_flight}, 1}}));

  add_created(101, 20000);
  ledger.mark_created(kOrder, "R-2", 7, "");
  db.exec("DELETE FROM outbound_ledger WHERE source_key = 'O-1'");
  const long many = vm_steps_of(db, [&] { counts = ledger.backlog(); });
  EXPECT_EQ(counts, (std::map<std::pair<LedgerKind, LedgerState>, int>{{{kOrder, LedgerState::created}, 20000},
                                                                      {{kOrder, LedgerState::pending}, 1}}));
  // A row of counts fewer or more changes a few steps; reading the entries, thousands.
  EXPECT_LE(many, few + 20) << many << " steps to count 20,000 entries against " << few << " for 100";
}

// A statement over a page of entries is written for a few page sizes: a page of one entry does about
// one entry's work, not that of a full page whose absent rows are each looked up.
TEST_F(OutboundLedgerTest, APageOfOneEntryCostsAboutOneEntry) {
  SQLite::Database& db = store->database();
  std::vector<std::string> keys;
  for (int i = 0; i <= 100; ++i) {
    keys.push_back(fmt::format("R-{}", i));
    ASSERT_EQ(ledger.offer(kOrder, keys.back(), "h", "{}"), Offer::queued);
  }
  const std::span<const std::string> one(keys.data(), 1);
  const std::span<const std::string> full_page(keys.data() + 1, 100);
  ASSERT_EQ(full_page.size(), OutboundLedger::kRowsPerStatement);
  const auto views = [](std::span<const std::string> of) {
    return std::vector<std::string_view>(of.begin(), of.end());
  };
  const auto answers = [](std::span<const std::string> of) {
    std::vector<OutboundLedger::Created> created;
    for (const std::string& key : of) {
      created.push_back({.source_key = key, .remote_id = 7, .remote_status = "Processing", .remote_created_at = ""});
    }
    return created;
  };
  const auto entries = [&](std::span<const std::string> of) {
    std::vector<LedgerEntry> found;
    for (const std::string& key : of) found.push_back(*ledger.find(kOrder, key));
    return found;
  };
  // The steps of each statement for a page of `keys`, moving them from pending to created.
  const auto steps_of = [&](std::span<const std::string> page) {
    std::map<std::string, long> steps;
    steps["held_versions"] =
        vm_steps_of(db, [&] { EXPECT_EQ(ledger.held_versions(kOrder, page).size(), page.size()); });
    const auto leaving = views(page);
    steps["mark_in_flight"] = vm_steps_of(db, [&] { ledger.mark_in_flight(kOrder, leaving); });
    const auto created = answers(page);
    steps["mark_created"] = vm_steps_of(db, [&] { ledger.mark_created(kOrder, created); });
    const auto settled = entries(page);
    steps["mark_results_written"] = vm_steps_of(db, [&] { ledger.mark_results_written(settled); });
    return steps;
  };
  const auto for_one = steps_of(one);
  const auto for_full_page = steps_of(full_page);
  for (const std::string& key : keys) EXPECT_EQ(ledger.find(kOrder, key)->state, LedgerState::created) << key;
  for (const auto& [statement, steps] : for_one) {
    // Written for the full page alone, a page of one took about as many steps as a full page.
    EXPECT_LT(steps * 10, for_full_page.at(statement))
        << statement << ": " << steps << " steps for one entry against " << for_full_page.at(statement) << " for 100";
  }
}

// A store written before `applied` existed keeps its applied cancels, now named so.
TEST(OutboundLedgerMigrationTest, CancelsCreatedBeforeVersion6AreApplied) {
  testing::TempDir dir;
  const auto path = dir / "checkpoint.db";
  {
    SQLite::Database db(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    const auto all = schema::checkpoint_migrations();
    ASSERT_GE(all.size(), 6u);
    sqlite::migrate(db, all.first(5), "schema_migrations", "checkpoint store");
    db.exec("INSERT INTO outbound_ledger (kind, source_key, content_hash, state, remote_id, created_at, updated_at) "
            "VALUES ('order_cancel', 'C-1', 'h', 'created', 7, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'), "
            "('order_create', 'C-1', 'h', 'created', 7, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')");
  }
  CheckpointStore store(path);
  OutboundLedger migrated(store);
  EXPECT_EQ(migrated.find(LedgerKind::order_cancel, "C-1")->state, LedgerState::applied);
  EXPECT_EQ(migrated.find(LedgerKind::order_create, "C-1")->state, LedgerState::created);
  EXPECT_EQ(migrated.find(LedgerKind::order_create, "C-1")->remote_id, 7);
}

}  // namespace
}  // namespace fulfillsync::daemon
