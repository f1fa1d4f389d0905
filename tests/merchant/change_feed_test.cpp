#include "fulfillsync/merchant/change_feed.hpp"

#include <gmock/gmock.h>

#include "merchant_fixture.hpp"

namespace fulfillsync::merchant {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The real connector's source tables, counting the reads that reach them.
class CountingSource final : public SourceTables {
 public:
  explicit CountingSource(SourceTables& source) : source_(source) {}
  int reads = 0;

  std::vector<std::string> check_source_tables() override { return source_.check_source_tables(); }
  std::uint64_t change_counter() override { return source_.change_counter(); }
  std::vector<OrderRow> read_orders(const ReadRange& range) override {
    ++reads;
    return source_.read_orders(range);
  }
  std::vector<ReturnRow> read_returns(const ReadRange& range) override {
    ++reads;
    return source_.read_returns(range);
  }
  std::vector<OpenRowVersion> open_row_versions(SourceKind kind, std::string_view after_key,
                                                std::size_t limit) override {
    return source_.open_row_versions(kind, after_key, limit);
  }
  std::vector<OrderRow> read_orders_by_key(const KeyRange& range) override { return source_.read_orders_by_key(range); }
  std::vector<ReturnRow> read_returns_by_key(const KeyRange& range) override {
    return source_.read_returns_by_key(range);
  }
  std::vector<OrderRow> read_orders(std::span<const std::string> keys) override { return source_.read_orders(keys); }
  std::vector<ReturnRow> read_returns(std::span<const std::string> keys) override { return source_.read_returns(keys); }
  std::int64_t count_changes_after(SourceKind kind, const ChangeCursor& after) override {
    return source_.count_changes_after(kind, after);
  }

 private:
  SourceTables& source_;
};

class ChangeFeedTest : public MerchantDatabaseTest {
 protected:
  // Polls until the feed has nothing more right now; the keys handed out, in order (and those
  // reported ahead of the clock, into `ahead`).
  template <typename Row>
  static std::vector<std::string> drain(ChangeFeed<Row>& feed, timestamps::TimePoint now, bool* reread = nullptr,
                                        std::vector<std::string>* ahead = nullptr) {
    std::vector<std::string> keys;
    for (;;) {
      auto batch = feed.poll(now);
      for (const auto& row : batch.rows) keys.push_back(row.reference_id);
      if (reread != nullptr && batch.rereads && !batch.rows.empty()) *reread = true;
      if (ahead != nullptr) {
        for (const auto& row : batch.ahead) ahead->push_back(row.reference_id);
      } else {
        EXPECT_THAT(batch.ahead, IsEmpty());
      }
      if (!batch.more) return keys;
    }
  }

  const timestamps::TimePoint now = timestamps::parse_iso8601("2026-03-01T10:10:00Z").value();
  std::unique_ptr<SqliteMerchantDatabase> real = open();
  CountingSource db{real->source()};
};

TEST_F(ChangeFeedTest, SkipsThePollWhenNothingChanged) {
  add_order("A-1", "2026-03-01T10:00:00.000Z");
  ChangeFeed<OrderRow> feed(db, {.look_back = std::chrono::minutes(5), .batch_size = 10});
  EXPECT_THAT(drain(feed, now), ElementsAre("A-1", "A-1"));  // the head, then the look-back window
  const int reads = db.reads;
  EXPECT_THAT(feed.poll(now).rows, IsEmpty());
  EXPECT_EQ(db.reads, reads);  // data_version unchanged: not one read

  add_order("A-2", "2026-03-01T10:00:01.000Z");
  EXPECT_EQ(feed.poll(now).rows.at(0).reference_id, "A-2");
  EXPECT_EQ(feed.cursor(), (ChangeCursor{"2026-03-01T10:00:01.000Z", "A-2"}));
}

TEST_F(ChangeFeedTest, PagesOverEqualTimestampsWithoutLosingRows) {
  for (int i = 0; i < 23; ++i) add_order(fmt::format("E-{:02}", (i * 7) % 23), "2026-03-01T10:00:00.000Z");
  ChangeFeed<OrderRow> feed(db, {.look_back = std::chrono::milliseconds(0), .batch_size = 5});
  const auto keys = drain(feed, now);
  ASSERT_EQ(keys.size(), 23u);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end());
}

TEST_F(ChangeFeedTest, ARowCommittedLateWithAnOlderTimestampIsSeenWithinTheLookBack) {
  add_order("M-2", "2026-03-01T10:09:58.000Z");
  add_order("M-3", "2026-03-01T10:09:59.000Z");
  ChangeFeed<OrderRow> feed(db, {.look_back = std::chrono::seconds(30), .batch_size = 10});
  drain(feed, now);
  ASSERT_EQ(feed.cursor().reference_id, "M-3");

  // Its transaction took its timestamp before M-3's, then committed after the feed read M-3.
  add_order("M-1", "2026-03-01T10:09:50.000Z");
  bool reread = false;
  EXPECT_THAT(drain(feed, now + std::chrono::seconds(1), &reread), ElementsAre("M-1", "M-2", "M-3"));
  EXPECT_TRUE(reread);
  EXPECT_EQ(feed.cursor().reference_id, "M-3");  // the cursor never moves back
}

TEST_F(ChangeFeedTest, UnderASteadyFlowTheWindowIsReadOnceInAThirtiethOfTheLookBack) {
  add_order("F-1", "2026-03-01T10:09:58.000Z");
  ChangeFeed<OrderRow> feed(db, {.look_back = std::chrono::seconds(30), .batch_size = 10});
  drain(feed, now);  // the head and a first window
  add_order("F-0", "2026-03-01T10:09:50.000Z");  // committed late
  add_order("F-2", "2026-03-01T10:09:59.000Z");
  bool reread = false;
  EXPECT_THAT(drain(feed, now + std::chrono::milliseconds(500), &reread), ElementsAre("F-2"));
  EXPECT_FALSE(reread);  // within a second (30 s / 30) of the last window: the head only
  // Due now, with nothing changed since: the window is read, and the late row with it.
  EXPECT_THAT(drain(feed, now + std::chrono::seconds(1), &reread), ElementsAre("F-0", "F-1", "F-2"));
  EXPECT_TRUE(reread);
}

TEST_F(ChangeFeedTest, WithoutALookBackTheLateRowIsLost) {
  add_order("M-3", "2026-03-01T10:09:59.000Z");
  ChangeFeed<OrderRow> feed(db, {.look_back = std::chrono::milliseconds(0), .batch_size = 10});
  drain(feed, now);
  add_order("M-1", "2026-03-01T10:09:50.000Z");
  EXPECT_THAT(drain(feed, now), IsEmpty());  // why the look-back window exists
}

TEST_F(ChangeFeedTest, TheWindowReachesBackFromThePreviousWindowsStart) {
  add_order("N-1", "2026-03-01T10:00:00.000Z");
  ChangeFeed<OrderRow> feed(db, {.look_back = std::chrono::seconds(10), .batch_size = 10});
  drain(feed, now);  // window started at 10:10:00
  // The cursor runs ahead (a clock ahead of ours, within max_clock_skew); a row committed late is
  // still within look_back of the previous window's start.
  add_order("N-9", "2026-03-01T10:14:00.000Z");
  drain(feed, now + std::chrono::seconds(1));
  add_order("N-5", "2026-03-01T10:09:55.000Z");
  EXPECT_THAT(drain(feed, now + std::chrono::seconds(2)), ::testing::Contains("N-5"));
}

TEST_F(ChangeFeedTest, NothingBeforeTheStartingPointEvenWithinTheLookBack) {
  add_return("RMA-1", "2026-03-01T10:04:00.000Z");
  add_return("RMA-2", "2026-03-01T10:06:00.000Z");
  const ChangeCursor since{"2026-03-01T10:05:00.000Z", ""};
  ChangeFeed<ReturnRow> feed(db, {.look_back = std::chrono::minutes(5), .batch_size = 10}, since, since);
  EXPECT_THAT(drain(feed, now), ElementsAre("RMA-2", "RMA-2"));
}

// One row dated far ahead (a typo, a clock gone wrong) must not carry the cursor past every row
// written after it.
TEST_F(ChangeFeedTest, ARowFarInTheFutureIsReportedAheadAndHoldsNothingUp) {
  add_order("A-1", "2026-03-01T10:00:00.000Z");
  add_order("Z-1", "9999-12-31T23:59:59.999Z");
  ChangeFeed<OrderRow> feed(db, {.look_back = std::chrono::minutes(5), .batch_size = 10});
  std::vector<std::string> ahead;
  EXPECT_THAT(drain(feed, now, nullptr, &ahead), ElementsAre("A-1", "A-1"));  // the head, then the window
  EXPECT_THAT(ahead, ElementsAre("Z-1"));
  EXPECT_EQ(feed.cursor(), (ChangeCursor{"2026-03-01T10:00:00.000Z", "A-1"}));

  // Rows written after it are read; it is reported again (the caller knows it already).
  add_order("A-2", "2026-03-01T10:09:00.000Z");
  ahead.clear();
  EXPECT_THAT(drain(feed, now + std::chrono::seconds(20), nullptr, &ahead), ElementsAre("A-2", "A-2"));
  EXPECT_THAT(ahead, ElementsAre("Z-1"));
  EXPECT_EQ(feed.cursor().reference_id, "A-2");

  // Corrected, it is read like any other row.
  app.exec("UPDATE fulfillsync_orders SET updated_at = '2026-03-01T10:09:30.000Z' WHERE reference_id = 'Z-1'");
  ahead.clear();
  EXPECT_THAT(drain(feed, now + std::chrono::seconds(40), nullptr, &ahead), ::testing::Contains("Z-1"));
  EXPECT_THAT(ahead, IsEmpty());
  EXPECT_EQ(feed.cursor().reference_id, "Z-1");
}

// An application server whose clock runs a little ahead is taken at once; a row further ahead is
// handed out when the clock reaches it, without another commit to wake the feed.
TEST_F(ChangeFeedTest, ARowAheadIsTakenWhenTheClockReachesIt) {
  add_order("B-1", "2026-03-01T10:09:00.000Z");
  add_order("B-2", "2026-03-01T10:14:00.000Z");  // 4 minutes ahead: within max_clock_skew
  add_order("B-3", "2026-03-01T10:16:00.000Z");  // 6 minutes ahead
  ChangeFeed<OrderRow> feed(
      db, {.look_back = std::chrono::milliseconds(0), .batch_size = 10, .max_clock_skew = std::chrono::minutes(5)});
  std::vector<std::string> ahead;
  EXPECT_THAT(drain(feed, now, nullptr, &ahead), ElementsAre("B-1", "B-2"));
  EXPECT_THAT(ahead, ElementsAre("B-3"));
  EXPECT_LE(feed.cursor(), ChangeFeed<OrderRow>::read_limit({}, now));

  const int reads = db.reads;
  EXPECT_THAT(drain(feed, now + std::chrono::seconds(59)), IsEmpty());
  EXPECT_EQ(db.reads, reads);  // not yet within reach, nothing committed: not one read
  EXPECT_THAT(drain(feed, now + std::chrono::minutes(1)), ElementsAre("B-3"));
  EXPECT_EQ(feed.cursor().reference_id, "B-3");
}

TEST_F(ChangeFeedTest, ManyRowsAheadAreReportedBatchByBatch) {
  for (int i = 0; i < 7; ++i) add_return(fmt::format("RMA-{}", i), fmt::format("2030-01-01T00:00:0{}.000Z", i));
  add_return("RMA-now", "2026-03-01T10:00:00.000Z");
  add_return("RMA-odd", "not a date");  // sorts after every date: ahead of any clock
  ChangeFeed<ReturnRow> feed(db, {.look_back = std::chrono::milliseconds(0), .batch_size = 3});
  std::vector<std::string> ahead;
  EXPECT_THAT(drain(feed, now, nullptr, &ahead), ElementsAre("RMA-now"));
  EXPECT_THAT(ahead, ElementsAre("RMA-0", "RMA-1", "RMA-2", "RMA-3", "RMA-4", "RMA-5", "RMA-6", "RMA-odd"));
  const int reads = db.reads;
  EXPECT_THAT(drain(feed, now + std::chrono::hours(1)), IsEmpty());
  EXPECT_EQ(db.reads, reads);
}

// What the head handed out is never reported ahead, even after this server's clock stepped back.
TEST_F(ChangeFeedTest, AClockSteppedBackReportsNothingAlreadyRead) {
  add_order("C-1", "2026-03-01T10:14:00.000Z");
  ChangeFeed<OrderRow> feed(db, {.look_back = std::chrono::milliseconds(0), .batch_size = 10});
  EXPECT_THAT(drain(feed, now), ElementsAre("C-1"));
  add_order("C-2", "2026-03-01T10:15:00.000Z");
  std::vector<std::string> ahead;
  EXPECT_THAT(drain(feed, now - std::chrono::minutes(10), nullptr, &ahead), IsEmpty());
  EXPECT_THAT(ahead, ElementsAre("C-2"));
  EXPECT_EQ(feed.cursor().reference_id, "C-1");
}

}  // namespace
}  // namespace fulfillsync::merchant
