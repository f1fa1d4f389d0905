#include "fulfillsync/daemon/store/tracking_mark_ledger.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::daemon {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using merchant::TrackingMarkResult;
using merchant::TrackingToMark;

class TrackingMarkLedgerTest : public ::testing::Test {
 protected:
  testing::TempDir dir;
  std::unique_ptr<CheckpointStore> store = std::make_unique<CheckpointStore>(dir / "checkpoint.db");
  TrackingMarkLedger ledger{*store};

  int offer(std::initializer_list<TrackingToMark> shipments) {
    return ledger.offer(std::span<const TrackingToMark>(shipments.begin(), shipments.size()));
  }

  // The mark of `shipment_id` in whatever state it is.
  std::optional<TrackingMark> find(std::int64_t shipment_id) {
    for (const MarkState state : {MarkState::pending, MarkState::in_flight, MarkState::marked, MarkState::unknown}) {
      for (auto& mark : ledger.in_state(state, 1000)) {
        if (mark.shipment_id == shipment_id) return mark;
      }
    }
    return std::nullopt;
  }

  std::vector<std::int64_t> due_ids(int limit = 100) {
    std::vector<std::int64_t> ids;
    for (const auto& mark : ledger.due(limit)) ids.push_back(mark.shipment_id);
    return ids;
  }

  std::string next_attempt_at(std::int64_t shipment_id) {
    SQLite::Statement query(store->database(), "SELECT next_attempt_at FROM tracking_marks WHERE shipment_id = ?");
    query.bind(1, static_cast<int64_t>(shipment_id));
    EXPECT_TRUE(query.executeStep()) << "no mark for shipment " << shipment_id;
    return query.getColumn(0).getString();
  }

  // Time passes for one mark: its next attempt is at `when` (ISO 8601 as the ledger writes it).
  void set_next_attempt_at(std::int64_t shipment_id, std::string_view when) {
    SQLite::Statement update(store->database(), "UPDATE tracking_marks SET next_attempt_at = ? WHERE shipment_id = ?");
    update.bind(1, std::string(when));
    update.bind(2, static_cast<int64_t>(shipment_id));
    ASSERT_EQ(update.exec(), 1);
  }

  // Sends shipment_id and settles it as the provider refusing the item.
  void send_and_fail(std::int64_t shipment_id, std::string_view reason, std::chrono::seconds retry_after) {
    ledger.mark_in_flight(shipment_id);
    ledger.mark_failed(shipment_id, reason, retry_after);
  }
};

TEST_F(TrackingMarkLedgerTest, OfferQueuesEachShipmentOnceAndCountsTheNewOnes) {
  EXPECT_EQ(offer({{.shipment_id = 1, .order_id = 10}, {.shipment_id = 2, .order_id = 10}}), 2);
  EXPECT_EQ(offer({{.shipment_id = 2, .order_id = 10}, {.shipment_id = 3, .order_id = 11}}), 1);
  EXPECT_EQ(offer({{.shipment_id = 4, .order_id = 12}, {.shipment_id = 4, .order_id = 12}}), 1);
  EXPECT_EQ(offer({}), 0);

  const auto due = ledger.due(10);
  ASSERT_EQ(due.size(), 4u);
  for (const auto& mark : due) {
    EXPECT_EQ(mark.state, MarkState::pending);
    EXPECT_EQ(mark.attempts, 0);
    EXPECT_EQ(mark.last_error, "");
    EXPECT_TRUE(timestamps::parse_iso8601(mark.updated_at)) << mark.updated_at;
  }
  EXPECT_EQ(find(1)->order_id, 10);
  EXPECT_EQ(find(3)->order_id, 11);
  EXPECT_EQ(find(4)->order_id, 12);
  EXPECT_EQ(ledger.counts(), (std::map<MarkState, int>{{MarkState::pending, 4}}));
}

TEST_F(TrackingMarkLedgerTest, AShipmentAlreadyInTheLedgerIsNotQueuedAgainWhateverItsState) {
  offer({{.shipment_id = 1, .order_id = 10}});
  ledger.mark_in_flight(1);
  EXPECT_EQ(offer({{.shipment_id = 1, .order_id = 10}}), 0);
  EXPECT_EQ(find(1)->state, MarkState::in_flight);
  EXPECT_EQ(find(1)->attempts, 1);
  ledger.mark_marked(1);
  EXPECT_EQ(offer({{.shipment_id = 1, .order_id = 10}}), 0);
  EXPECT_EQ(find(1)->state, MarkState::marked);
}

TEST_F(TrackingMarkLedgerTest, DueIsOldestFirstRespectsTheLimitAndSkipsWhatIsNotDueYet) {
  offer({{.shipment_id = 1, .order_id = 10},
         {.shipment_id = 2, .order_id = 10},
         {.shipment_id = 3, .order_id = 10},
         {.shipment_id = 4, .order_id = 10}});
  set_next_attempt_at(3, "2026-01-01T00:00:01.000Z");
  set_next_attempt_at(2, "2026-01-01T00:00:02.000Z");
  set_next_attempt_at(1, "2026-01-01T00:00:02.000Z");  // as old as 2: the lower id first
  set_next_attempt_at(4, "2999-01-01T00:00:00.000Z");
  EXPECT_THAT(due_ids(), ElementsAre(3, 1, 2));
  EXPECT_THAT(due_ids(2), ElementsAre(3, 1));
  EXPECT_THAT(due_ids(1), ElementsAre(3));
  // Only pending marks are due.
  ledger.mark_in_flight(3);
  EXPECT_THAT(due_ids(), ElementsAre(1, 2));
}

TEST_F(TrackingMarkLedgerTest, InFlightCountsAnAttemptAndIsNoLongerDue) {
  offer({{.shipment_id = 1, .order_id = 10}, {.shipment_id = 2, .order_id = 10}});
  ledger.mark_in_flight(1);
  const auto mark = find(1);
  ASSERT_TRUE(mark);
  EXPECT_EQ(mark->state, MarkState::in_flight);
  EXPECT_EQ(mark->attempts, 1);
  EXPECT_THAT(due_ids(), ElementsAre(2));
  // Being sent is not a result the merchant's row shows.
  EXPECT_TRUE(ledger.unwritten_results(10).empty());
  EXPECT_EQ(ledger.waiting(), 2);
}

TEST_F(TrackingMarkLedgerTest, AMarkedShipmentIsReportedWithItsTimeAndDroppedOnceWritten) {
  offer({{.shipment_id = 1, .order_id = 10}});
  ledger.mark_in_flight(1);
  ledger.mark_marked(1);
  const auto mark = find(1);
  ASSERT_TRUE(mark);
  EXPECT_EQ(mark->state, MarkState::marked);
  EXPECT_EQ(mark->attempts, 1);
  EXPECT_TRUE(ledger.due(10).empty());
  EXPECT_EQ(ledger.waiting(), 0);
  EXPECT_EQ(ledger.failing(), 0);

  const auto results = ledger.unwritten_results(10);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0], (TrackingMarkResult{.shipment_id = 1, .marked_at = mark->updated_at, .attempts = 1}));
  EXPECT_TRUE(timestamps::parse_iso8601(*results[0].marked_at)) << *results[0].marked_at;

  ledger.results_written(results);
  EXPECT_TRUE(ledger.unwritten_results(10).empty());
  EXPECT_FALSE(find(1));  // the merchant's row says it from now on
  EXPECT_TRUE(ledger.counts().empty());
}

TEST_F(TrackingMarkLedgerTest, ARefusedMarkWaitsForItsRetryAndKeepsTheReason) {
  offer({{.shipment_id = 1, .order_id = 10}});
  const auto before = timestamps::Clock::now();
  send_and_fail(1, "shipment has no tracking", 1h);
  const auto after = timestamps::Clock::now();

  auto mark = find(1);
  ASSERT_TRUE(mark);
  EXPECT_EQ(mark->state, MarkState::pending);
  EXPECT_EQ(mark->attempts, 1);
  EXPECT_EQ(mark->last_error, "shipment has no tracking");
  EXPECT_TRUE(ledger.due(10).empty());  // not before an hour from now
  const auto next = timestamps::parse_iso8601(next_attempt_at(1));
  ASSERT_TRUE(next) << next_attempt_at(1);
  EXPECT_GE(*next, before + 1h - 1s);
  EXPECT_LE(*next, after + 1h + 1s);
  EXPECT_EQ(ledger.failing(), 1);
  EXPECT_EQ(ledger.waiting(), 0);

  // The refusal is a result for the merchant's row.
  const auto results = ledger.unwritten_results(10);
  EXPECT_THAT(results,
              ElementsAre(TrackingMarkResult{.shipment_id = 1, .error = "shipment has no tracking", .attempts = 1}));
  ledger.results_written(results);
  EXPECT_TRUE(ledger.unwritten_results(10).empty());
  mark = find(1);  // kept, to be tried again
  ASSERT_TRUE(mark);
  EXPECT_EQ(mark->state, MarkState::pending);
  EXPECT_EQ(mark->last_error, "shipment has no tracking");
  EXPECT_EQ(ledger.failing(), 1);

  // The hour passes: due again, and the next attempt is counted on top.
  set_next_attempt_at(1, "2026-01-01T00:00:00.000Z");
  const auto due = ledger.due(10);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].shipment_id, 1);
  EXPECT_EQ(due[0].attempts, 1);
  EXPECT_EQ(due[0].last_error, "shipment has no tracking");
  ledger.mark_in_flight(1);
  ledger.mark_marked(1);
  const auto marked = ledger.unwritten_results(10);
  ASSERT_EQ(marked.size(), 1u);
  EXPECT_TRUE(marked[0].marked_at);
  EXPECT_EQ(marked[0].error, std::nullopt);
  EXPECT_EQ(marked[0].attempts, 2);
}

TEST_F(TrackingMarkLedgerTest, ANotSentMarkTakesItsAttemptBackAndIsDueAtOnce) {
  offer({{.shipment_id = 1, .order_id = 10}});
  set_next_attempt_at(1, "2026-01-01T00:00:00.000Z");
  ledger.mark_in_flight(1);
  ledger.mark_not_sent(1);
  auto mark = find(1);
  ASSERT_TRUE(mark);
  EXPECT_EQ(mark->state, MarkState::pending);
  EXPECT_EQ(mark->attempts, 0);
  EXPECT_EQ(mark->last_error, "");
  EXPECT_THAT(due_ids(), ElementsAre(1));
  EXPECT_GT(next_attempt_at(1), "2026-01-01T00:00:00.000Z");  // due from now, not from its first offer
  EXPECT_TRUE(ledger.unwritten_results(10).empty());     // nothing the merchant's row should show
  EXPECT_EQ(ledger.waiting(), 1);

  // After a refusal, an unsent retry keeps the attempts that did reach the provider.
  send_and_fail(1, "refused", 0s);
  ledger.mark_in_flight(1);
  EXPECT_EQ(find(1)->attempts, 2);
  ledger.mark_not_sent(1);
  EXPECT_EQ(find(1)->attempts, 1);
  EXPECT_THAT(due_ids(), ElementsAre(1));
}

TEST_F(TrackingMarkLedgerTest, AnUnknownMarkIsLookedUpThenMarkedOrSentAgain) {
  offer({{.shipment_id = 1, .order_id = 10}, {.shipment_id = 2, .order_id = 20}});
  ledger.mark_in_flight(1);
  ledger.mark_in_flight(2);
  ledger.mark_unknown(1, "waiting for the answer: timed out");
  ledger.mark_unknown(2, "HTTP 503");

  const auto unknown = ledger.in_state(MarkState::unknown, 10);
  ASSERT_EQ(unknown.size(), 2u);
  EXPECT_EQ(find(1)->last_error, "waiting for the answer: timed out");
  EXPECT_EQ(find(2)->last_error, "HTTP 503");
  EXPECT_EQ(find(2)->order_id, 20);  // how it is looked up
  EXPECT_EQ(find(2)->attempts, 1);
  EXPECT_TRUE(ledger.due(10).empty());  // never sent again before it is looked up
  EXPECT_TRUE(ledger.unwritten_results(10).empty());
  EXPECT_EQ(ledger.waiting(), 2);
  EXPECT_EQ(ledger.failing(), 0);

  // The provider has 1 marked uploaded: adopted.
  ledger.mark_marked(1);
  EXPECT_EQ(find(1)->state, MarkState::marked);
  EXPECT_EQ(find(1)->attempts, 1);
  // It does not have 2: pending and due at once, the attempt kept.
  ledger.mark_absent(2);
  const auto absent = find(2);
  ASSERT_TRUE(absent);
  EXPECT_EQ(absent->state, MarkState::pending);
  EXPECT_EQ(absent->attempts, 1);
  EXPECT_EQ(absent->last_error, "");
  EXPECT_THAT(due_ids(), ElementsAre(2));
  EXPECT_EQ(ledger.waiting(), 1);
  EXPECT_EQ(ledger.failing(), 0);
  EXPECT_THAT(ledger.unwritten_results(10), ElementsAre(::testing::Field(&TrackingMarkResult::shipment_id, 1)));
}

TEST_F(TrackingMarkLedgerTest, ACrashLeavesInFlightMarksUnknown) {
  const auto path = dir / "crashed.db";
  {
    CheckpointStore crashed(path);
    TrackingMarkLedger before(crashed);
    const std::vector<TrackingToMark> shipments{{.shipment_id = 1, .order_id = 10}, {.shipment_id = 2, .order_id = 10}};
    before.offer(shipments);
    before.mark_in_flight(1);
  }  // The process dies here; a new one opens the same store.
  CheckpointStore store_again(path);
  TrackingMarkLedger reopened(store_again);
  EXPECT_EQ(reopened.recover_interrupted(), 1);
  EXPECT_EQ(reopened.recover_interrupted(), 0);
  const auto unknown = reopened.in_state(MarkState::unknown, 10);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].shipment_id, 1);
  EXPECT_EQ(unknown[0].attempts, 1);
  EXPECT_EQ(unknown[0].last_error, "interrupted while in flight");
  const auto pending = reopened.in_state(MarkState::pending, 10);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].shipment_id, 2);
  EXPECT_TRUE(reopened.in_state(MarkState::in_flight, 10).empty());
}

TEST_F(TrackingMarkLedgerTest, UnwrittenResultsListMarkedAndRefusedMarksByShipment) {
  offer({{.shipment_id = 3, .order_id = 10},
         {.shipment_id = 1, .order_id = 10},
         {.shipment_id = 2, .order_id = 10},
         {.shipment_id = 4, .order_id = 10}});
  ledger.mark_in_flight(3);
  ledger.mark_marked(3);
  send_and_fail(1, "carrier unknown", 1h);
  ledger.mark_in_flight(2);  // being sent: no result yet
  // 4 is pending: no result yet
  const std::string marked_at = find(3)->updated_at;

  EXPECT_THAT(ledger.unwritten_results(10),
              ElementsAre(TrackingMarkResult{.shipment_id = 1, .error = "carrier unknown", .attempts = 1},
                          TrackingMarkResult{.shipment_id = 3, .marked_at = marked_at, .attempts = 1}));
  const auto first = ledger.unwritten_results(1);
  EXPECT_THAT(first, ElementsAre(::testing::Field(&TrackingMarkResult::shipment_id, 1)));

  // Written one at a time: the rest stays unwritten.
  ledger.results_written(first);
  EXPECT_THAT(ledger.unwritten_results(10), ElementsAre(::testing::Field(&TrackingMarkResult::shipment_id, 3)));
  ledger.results_written(ledger.unwritten_results(10));
  EXPECT_TRUE(ledger.unwritten_results(10).empty());
  EXPECT_EQ(ledger.counts(), (std::map<MarkState, int>{{MarkState::pending, 2}, {MarkState::in_flight, 1}}));

  // A refusal written once is reported again when the next attempt is refused too.
  set_next_attempt_at(1, "2026-01-01T00:00:00.000Z");
  send_and_fail(1, "carrier still unknown", 1h);
  EXPECT_THAT(ledger.unwritten_results(10),
              ElementsAre(TrackingMarkResult{.shipment_id = 1, .error = "carrier still unknown", .attempts = 2}));
}

TEST_F(TrackingMarkLedgerTest, AWrittenFailureIsNotDroppedWhenTheMarkSucceedsMeanwhile) {
  offer({{.shipment_id = 1, .order_id = 10}});
  send_and_fail(1, "refused", 0s);
  const auto stale = ledger.unwritten_results(10);  // read before the next attempt...
  ASSERT_EQ(stale.size(), 1u);
  ledger.mark_in_flight(1);
  ledger.mark_marked(1);
  ledger.results_written(stale);  // ...written after it succeeded
  // The success is still to be written, and the mark not dropped before it is.
  const auto results = ledger.unwritten_results(10);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].marked_at);
  EXPECT_EQ(find(1)->state, MarkState::marked);
}

TEST_F(TrackingMarkLedgerTest, WaitingFailingAndCountsByState) {
  EXPECT_EQ(ledger.waiting(), 0);
  EXPECT_EQ(ledger.failing(), 0);
  EXPECT_TRUE(ledger.counts().empty());
  offer({{.shipment_id = 1, .order_id = 10},
         {.shipment_id = 2, .order_id = 10},
         {.shipment_id = 3, .order_id = 10},
         {.shipment_id = 4, .order_id = 10},
         {.shipment_id = 5, .order_id = 10},
         {.shipment_id = 6, .order_id = 10}});
  // 1 stays pending.
  ledger.mark_in_flight(2);
  ledger.mark_in_flight(3);
  ledger.mark_unknown(3, "timed out");
  send_and_fail(4, "refused", 1h);
  send_and_fail(5, "refused", 1h);
  ledger.mark_in_flight(6);
  ledger.mark_marked(6);

  EXPECT_EQ(ledger.waiting(), 3);  // 1, 2 and 3
  EXPECT_EQ(ledger.failing(), 2);  // 4 and 5
  EXPECT_EQ(ledger.counts(), (std::map<MarkState, int>{{MarkState::pending, 3},
                                                        {MarkState::in_flight, 1},
                                                        {MarkState::marked, 1},
                                                        {MarkState::unknown, 1}}));
}

TEST_F(TrackingMarkLedgerTest, ABatchIsOneCommit) {
  {
    auto batch = ledger.batch();
    offer({{.shipment_id = 1, .order_id = 10}});
    // Not committed: gone with the batch.
  }
  EXPECT_FALSE(find(1));
  offer({{.shipment_id = 1, .order_id = 10}, {.shipment_id = 2, .order_id = 10}});
  ledger.mark_in_flight(1);
  ledger.mark_in_flight(2);
  {
    auto batch = ledger.batch();
    ledger.mark_marked(1);
    ledger.mark_failed(2, "refused", 1h);
    batch.commit();
  }
  EXPECT_EQ(find(1)->state, MarkState::marked);
  EXPECT_EQ(find(2)->last_error, "refused");
}

TEST(MarkStateTest, NamesAreTheSchemaStates) {
  EXPECT_EQ(to_string(MarkState::pending), "pending");
  EXPECT_EQ(to_string(MarkState::in_flight), "in_flight");
  EXPECT_EQ(to_string(MarkState::marked), "marked");
  EXPECT_EQ(to_string(MarkState::unknown), "unknown");
}

using TrackingMarkLedgerDeathTest = TrackingMarkLedgerTest;

TEST_F(TrackingMarkLedgerDeathTest, AnImpossibleTransitionStopsTheProcess) {
  offer({{.shipment_id = 1, .order_id = 10}});
  // Recording a mark that was never sent would hide a bug.
  EXPECT_DEATH(ledger.mark_marked(1), "a mark moves only from the states its transition allows");
  EXPECT_DEATH(ledger.mark_not_sent(1), "only a mark in flight can come back unsent");
}

}  // namespace
}  // namespace fulfillsync::daemon
