#pragma once
// Polling one source table for changes: the `(updated_at, reference_id)` cursor, the look-back
// window, and the cheap "nothing changed" skip.
//
// poll() first reads the rows after the cursor, batch by batch. Once it has caught up, it reads the
// look-back window below the cursor once more, because a row committed late can carry an updated_at
// older than rows already read (its transaction took its timestamp, then committed after ours read
// past it). The window reaches `look_back` behind the older of the cursor and the start of the
// previous look-back read, so a row whose commit came at most `look_back` after its updated_at is
// seen. Re-read rows come back unchanged: the caller de-duplicates them by `content_hash`. The
// window is read at most once in a thirtieth of `look_back` (10 s for 5 minutes), however often
// rows change.
// When another connection has committed nothing since the last poll, poll() reads nothing.
//
// The read position never passes now + `max_clock_skew`: a row whose updated_at is further ahead
// (a wrong clock, a typo such as 9999-12-31) is not handed out, or it would move the cursor past
// every row written after it. Once the head has caught up, such rows are reported in `ahead` (the
// caller rejects them, with the reason); each is handed out once the clock reaches it (poll() reads
// again then, even with nothing committed) or once its updated_at moves back within reach.
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/merchant/source_tables.hpp"

namespace fulfillsync::merchant {

template <typename Row>  // OrderRow or ReturnRow
class ChangeFeed {
 public:
  struct Options {
    config::Duration look_back = std::chrono::minutes(5);
    std::size_t batch_size = 250;
    config::Duration max_clock_skew = std::chrono::minutes(5);
  };

  struct Batch {
    std::vector<Row> rows;
    bool rereads = false;  // rows of the look-back window: some were seen before
    bool more = false;     // poll again without waiting
    // Rows whose updated_at is more than max_clock_skew ahead of `now`, or is not a timestamp and
    // sorts after it: not handed out (see above). At most a batch per poll.
    std::vector<Row> ahead{};
  };

  // `start`: the cursor saved by the caller, or where a first start begins (`{since, ""}`). `floor`:
  // nothing before it is ever handed out, not even by the look-back window (the first start's
  // starting point, so history is not pushed by surprise).
  ChangeFeed(SourceTables& source, Options options, ChangeCursor start = {}, ChangeCursor floor = {});

  Batch poll(timestamps::TimePoint now = timestamps::Clock::now());

  // The highest position handed out; save it once the rows up to it are durable in the ledger.
  const ChangeCursor& cursor() const { return head_; }

  // Where reading stops at `now`: rows after it are ahead of the clock.
  static ChangeCursor read_limit(const Options& options, timestamps::TimePoint now);

 private:
  std::vector<Row> read(const ReadRange& range);
  std::vector<Row> read_ahead(timestamps::TimePoint now, const ChangeCursor& limit);

  SourceTables& source_;
  Options options_;
  ChangeCursor head_;
  ChangeCursor floor_;
  std::optional<std::uint64_t> counter_;
  bool head_pending_ = false;
  bool window_owed_ = false;
  std::optional<ChangeCursor> window_position_;  // inside a look-back read
  ChangeCursor window_through_;
  timestamps::TimePoint window_started_{};
  std::optional<timestamps::TimePoint> previous_window_started_;
  bool ahead_owed_ = false;                     // look for rows ahead once the head has caught up
  std::optional<ChangeCursor> ahead_position_;  // paging through the rows ahead
  std::optional<timestamps::TimePoint> ahead_due_;  // when the earliest row ahead comes within reach
};

extern template class ChangeFeed<OrderRow>;
extern template class ChangeFeed<ReturnRow>;

}  // namespace fulfillsync::merchant
