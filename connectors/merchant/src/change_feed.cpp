#include "fulfillsync/merchant/change_feed.hpp"

#include <algorithm>

namespace fulfillsync::merchant {

template <typename Row>
ChangeFeed<Row>::ChangeFeed(SourceTables& source, Options options, ChangeCursor start, ChangeCursor floor)
    : source_(source), options_(options), head_(std::move(start)), floor_(std::move(floor)) {}

template <typename Row>
std::vector<Row> ChangeFeed<Row>::read(const ReadRange& range) {
  if constexpr (std::is_same_v<Row, OrderRow>) {
    return source_.read_orders(range);
  } else {
    return source_.read_returns(range);
  }
}

template <typename Row>
ChangeCursor ChangeFeed<Row>::read_limit(const Options& options, timestamps::TimePoint now) {
  // The contract's form sorts as text in time order, to the millisecond: every row of the last
  // millisecond within reach is before the next one's "".
  const auto reach = std::chrono::floor<std::chrono::milliseconds>(now + options.max_clock_skew);
  return {timestamps::format_iso8601_z(reach + std::chrono::milliseconds(1)), ""};
}

template <typename Row>
std::vector<Row> ChangeFeed<Row>::read_ahead(timestamps::TimePoint now, const ChangeCursor& limit) {
  // From the limit, or from the head when a clock stepped back has left it beyond: what the head
  // handed out is not ahead.
  ChangeCursor from = std::max({limit, head_, floor_});
  if (ahead_position_) {
    from = std::max(from, *ahead_position_);
  } else {
    ahead_due_.reset();
  }
  std::vector<Row> rows = read(ReadRange{.after = from, .limit = options_.batch_size});
  if (rows.size() == options_.batch_size) {
    ahead_position_ = ChangeCursor{rows.back().change_time, rows.back().reference_id};
  } else {
    ahead_position_.reset();
    ahead_owed_ = false;
  }
  const auto reach = now + options_.max_clock_skew;
  std::erase_if(rows, [&](const Row& row) {
    const auto when = timestamps::parse_iso8601(row.change_time);
    if (!when) return false;  // not a timestamp, and sorts after the limit: no clock ever reaches it
    if (!ahead_due_ || *when < *ahead_due_) ahead_due_ = *when;
    return *when <= reach;  // within reach, though its text sorts after the limit: taken once the limit passes it
  });
  return rows;
}

template <typename Row>
typename ChangeFeed<Row>::Batch ChangeFeed<Row>::poll(timestamps::TimePoint now) {
  const ChangeCursor limit = read_limit(options_, now);
  if (!head_pending_) {
    // Read before the rows, so a commit that lands while they are read is seen by the next poll.
    const std::uint64_t counter = source_.change_counter();
    if (counter_ != counter) {
      counter_ = counter;
      head_pending_ = true;
      ahead_owed_ = true;
      window_owed_ = options_.look_back.count() > 0;
    } else if (ahead_due_ && now + options_.max_clock_skew >= *ahead_due_) {
      // A row ahead of the clock has come within reach: it is read though nothing was committed.
      ahead_due_.reset();
      head_pending_ = true;
      ahead_owed_ = true;
    } else if (!window_owed_ && !ahead_owed_) {
      return {};
    }
  }

  if (head_pending_ || ahead_owed_) {
    Batch batch;
    if (head_pending_) {
      batch.rows = read(ReadRange{.after = head_, .through = limit, .limit = options_.batch_size});
      if (!batch.rows.empty()) head_ = {batch.rows.back().change_time, batch.rows.back().reference_id};
      head_pending_ = batch.rows.size() == options_.batch_size;
    }
    if (!head_pending_ && ahead_owed_) batch.ahead = read_ahead(now, limit);
    batch.more = head_pending_ || ahead_owed_ || (window_owed_ && !head_.updated_at.empty());
    if (!batch.rows.empty() || !batch.ahead.empty() || head_pending_ || ahead_owed_) return batch;
  }

  if (!window_owed_ || head_.updated_at.empty()) {
    window_owed_ = false;
    return {};
  }
  // Under a steady flow of changes, reading the window after each would read look_back's rows over
  // and over. Read at most once in a thirtieth of look_back, every late row is still seen (the next
  // window reaches look_back behind this one's start), a moment later.
  if (!window_position_ && previous_window_started_ && now - *previous_window_started_ < options_.look_back / 30) {
    return {};
  }
  if (!window_position_) {
    // The window's lower bound: look_back behind the older of the cursor and the previous window's
    // start (a row committed since then carries an updated_at no older than that, minus look_back).
    window_started_ = now;
    ChangeCursor lower{head_.updated_at, ""};
    if (auto cursor_time = timestamps::parse_iso8601(head_.updated_at)) {
      auto from = *cursor_time;
      if (previous_window_started_) from = std::min(from, *previous_window_started_);
      lower.updated_at = timestamps::format_iso8601_z(from - options_.look_back);
    }
    window_position_ = std::max(lower, floor_);
    window_through_ = head_;
  }
  Batch batch{.rows = read(ReadRange{.after = *window_position_, .through = window_through_,
                                     .limit = options_.batch_size}),
              .rereads = true};
  if (batch.rows.size() == options_.batch_size) {
    window_position_ = ChangeCursor{batch.rows.back().change_time, batch.rows.back().reference_id};
    batch.more = true;
  } else {
    window_position_.reset();
    window_owed_ = false;
    previous_window_started_ = window_started_;
  }
  return batch;
}

template class ChangeFeed<OrderRow>;
template class ChangeFeed<ReturnRow>;

}  // namespace fulfillsync::merchant
