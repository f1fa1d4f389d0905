#include "fulfillsync/daemon/push/source_intake.hpp"

#include <algorithm>
#include <charconv>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/api/models/encode.hpp"
#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/config/duration.hpp"
#include "fulfillsync/daemon/job/failpoints.hpp"
#include "fulfillsync/daemon/mapping/request_mapping.hpp"
#include "push/open_rows.hpp"

namespace fulfillsync::daemon {
namespace {

using merchant::OrderRow;
using merchant::ReturnRow;

constexpr const char* kStartingPointName = "starting_point";

template <typename Row>
constexpr LedgerKind create_kind() {
  return std::is_same_v<Row, OrderRow> ? LedgerKind::order_create : LedgerKind::return_create;
}

template <typename Row>
constexpr merchant::SourceKind source_kind() {
  return std::is_same_v<Row, OrderRow> ? merchant::SourceKind::orders : merchant::SourceKind::returns;
}

template <typename Row>
constexpr std::string_view create_job() {
  return std::is_same_v<Row, OrderRow> ? "push_orders" : "push_returns";
}

// The request body for one row version, or the reasons it cannot be sent (printable: they reach
// logs and the result table).
struct BuiltBody {
  std::optional<std::string> body{};  // set exactly when the row can be sent
  std::string problems{};             // else why not
};

template <typename Row>
BuiltBody build_body(const Row& row, api::ApiVersion version, const merchant::SkuMap& skus) {
  auto mapped = [&] {
    if constexpr (std::is_same_v<Row, OrderRow>) return map_order(row, skus);
    else return map_return(row, skus);
  }();
  if (!mapped.ok()) return {.problems = mapped.reason()};
  api::Encoded body = api::encode(*mapped.request, version);
  if (!body) return {.problems = text::printable(body.error().to_string())};
  return {.body = std::move(*body), .problems = {}};
}

template <typename Row>
constexpr std::string_view noun() {
  return std::is_same_v<Row, OrderRow> ? "order" : "return";
}

// The ledger's version of a row rejected for an updated_at ahead of the clock: its content at that
// updated_at. The same content read again once the clock (or a corrected updated_at) lets it in is
// another version, so it is taken then; read again while still ahead, it is the same one.
template <typename Row>
std::string ahead_version(const Row& row) {
  return fmt::format("{} at {}", row.content_hash, text::printable(row.updated_at));
}

// Rejects a row the change feed found ahead of the clock (recorded like a row that fails
// validation, so the result table and `status` show why), unless this version was already.
template <typename Row>
void reject_ahead(OutboundLedger& ledger, SyncMetrics& metrics, const Row& row, config::Duration max_clock_skew) {
  constexpr LedgerKind kind = create_kind<Row>();
  const bool is_time = timestamps::parse_iso8601(row.change_time).has_value();
  const std::string reason =
      is_time ? fmt::format("updated_at is in the future: {} is more than {} ahead of this server's clock "
                            "(merchant.max_clock_skew); taken once it is corrected or the clock reaches it",
                            merchant::Field::of(row.updated_at).describe(), config::format_duration(max_clock_skew))
              : fmt::format("{}: updated_at is not a time, found {}: write ISO 8601 with Z or an offset, or "
                            "YYYY-MM-DD HH:MM:SS in merchant.timezone; taken once it is corrected",
                            std::is_same_v<Row, OrderRow> ? merchant::kOrdersTable : merchant::kReturnsTable,
                            row.change_time == "~NULL" && row.updated_at.empty()
                                ? std::string("NULL")
                                : merchant::Field::of(row.updated_at).describe());
  switch (ledger.offer(kind, row.reference_id, ahead_version(row), "")) {
    case Offer::queued:
      ledger.mark_rejected(kind, row.reference_id, reason);
      metrics.count_items(create_job<Row>(), "invalid");
      break;
    case Offer::already_sent: break;  // created before: the ledger notes the change it cannot apply
    case Offer::unchanged: return;
    case Offer::held:
      spdlog::debug("{} {}: being sent; its version ahead of the clock is judged once that settles", noun<Row>(),
                    text::printable(row.reference_id));
      return;
  }
  if (is_time) metrics.count_row_ahead_of_clock(kind);
  spdlog::warn("{} {} rejected: {}", noun<Row>(), text::printable(row.reference_id), reason);
}

}  // namespace

std::string encode_cursor(const merchant::ChangeCursor& cursor) {
  // Length-prefixed: a merchant's updated_at text may hold any character.
  return fmt::format("{}:{}{}", cursor.updated_at.size(), cursor.updated_at, cursor.reference_id);
}

std::optional<merchant::ChangeCursor> decode_cursor(std::string_view position) {
  const std::size_t colon = position.find(':');
  std::size_t length = 0;
  if (colon == std::string_view::npos) return std::nullopt;
  const auto [end, error] = std::from_chars(position.data(), position.data() + colon, length);
  if (error != std::errc() || end != position.data() + colon || length > position.size() - colon - 1) {
    return std::nullopt;
  }
  return merchant::ChangeCursor{std::string(position.substr(colon + 1, length)),
                                std::string(position.substr(colon + 1 + length))};
}

std::optional<std::string> saved_starting_point(CheckpointStore& store) { return store.cursor(kStartingPointName); }

std::string starting_point(CheckpointStore& store, const std::optional<std::string>& orders_since) {
  if (auto saved = saved_starting_point(store)) {
    if (orders_since && *orders_since != *saved) {
      spdlog::warn("sync.orders_since {} is ignored: pushing began at {} (the first start)", *orders_since, *saved);
    }
    return *saved;
  }
  const std::string since = orders_since.value_or(timestamps::format_iso8601_z(timestamps::Clock::now()));
  store.save_cursor(kStartingPointName, since);
  spdlog::info("first start: pushing source rows changed at or after {}", since);
  return since;
}

template <typename Row>
SourceIntake<Row>::SourceIntake(merchant::SourceTables& source, CheckpointStore& store, OutboundLedger& ledger,
                                SyncMetrics& metrics, Options options)
    : source_(source), store_(store), ledger_(ledger), metrics_(metrics), options_(std::move(options)),
      feed_(std::make_unique<merchant::ChangeFeed<Row>>(make_feed())),
      next_prune_(timestamps::Clock::now() + kPruneEvery),
      next_sweep_(timestamps::Clock::now() + options_.reconcile_interval) {
  start_sequence();
}

template <typename Row>
std::string SourceIntake<Row>::cursor_name() {
  return fmt::format("source:{}", std::is_same_v<Row, OrderRow> ? merchant::kOrdersTable : merchant::kReturnsTable);
}

template <typename Row>
std::string SourceIntake<Row>::sequence_name() {
  return fmt::format("changes:{}", std::is_same_v<Row, OrderRow> ? merchant::kOrdersTable : merchant::kReturnsTable);
}

template <typename Row>
std::string SourceIntake<Row>::catch_up_name() {
  return fmt::format("catch-up:{}",
                     std::is_same_v<Row, OrderRow> ? merchant::kOrdersTable : merchant::kReturnsTable);
}

template <typename Row>
void SourceIntake<Row>::start_sequence() {
  by_sequence_ = source_.has_change_log();
  if (!by_sequence_) return;
  // The catch-up reads after the saved cursor (which it does not move), and look_back behind it, as
  // the look-back window would have: a row committed late below the cursor is not missed.
  catch_up_from_ = feed_->cursor();
  if (const auto at = timestamps::parse_iso8601(catch_up_from_.updated_at)) {
    const merchant::ChangeCursor behind{timestamps::format_iso8601_z(*at - options_.feed.look_back), ""};
    catch_up_from_ = std::max(starting_cursor(), behind);
  }
  caught_up_through_ = feed_->cursor();
  constexpr std::string_view kCatchUp = "catch-up ";
  const std::string table = cursor_name().substr(cursor_name().find(':') + 1);
  if (const auto saved = store_.cursor(sequence_name())) {
    catching_up_ = saved->starts_with(kCatchUp);
    sequence_ = catching_up_ ? saved->substr(kCatchUp.size()) : *saved;
    saved_position_ = durable_position_ = sequence_;  // read from the store: on disk
    if (catching_up_) catch_up_key_ = store_.cursor(catch_up_name()).value_or("");
    // (While catching up, the read by updated_at covers what the log forgot.)
    if (catching_up_ || !source_.changes_forgotten_after(source_kind<Row>(), sequence_)) return;
    // A store restored from an older copy: changes after its position were handled (by the store
    // since replaced) and deleted from the log. What they were, the log cannot say; read the rows
    // again by updated_at from the saved read position, as when the log was new. Rows whose version
    // the ledger holds are recognised by their content and not sent again.
    spdlog::warn("{}: the change log has deleted entries after position {}, which this checkpoint store saved: "
                 "it is older than the store that handled them (restored from a backup?); reading the table "
                 "again by updated_at from the saved read position, then by the change log",
                 table, sequence_.empty() ? "0" : sequence_);
    sequence_ = "";
    begin_catch_up();
    return;
  }
  // A first start ever reads the log from its end (history is not pushed); a first start after the
  // log was added reads all of it, which holds every change since. Either way, what changed before
  // is read once by updated_at, from the saved cursor or the starting point.
  sequence_ = store_.cursor(cursor_name()) ? "" : source_.change_log_end(source_kind<Row>());
  begin_catch_up();
  spdlog::info("{}: reading by the change log from position {}", table, sequence_.empty() ? "0" : sequence_);
}

template <typename Row>
void SourceIntake<Row>::begin_catch_up() {
  // The log's position is saved first: what changes while the catch-up reads comes by the log.
  catching_up_ = true;
  catch_up_key_.clear();
  catch_up_held_before_.reset();
  store_.save_cursor(catch_up_name(), "");
  save_sequence();
}

template <typename Row>
bool SourceIntake<Row>::catch_up() {
  const std::size_t limit = options_.feed.batch_size;
  const merchant::KeyRange range{.after_key = catch_up_key_, .changed_after = catch_up_from_, .limit = limit};
  std::vector<Row> page = [&] {
    if constexpr (std::is_same_v<Row, OrderRow>) return source_.read_orders_by_key(range);
    else return source_.read_returns_by_key(range);
  }();
  const bool full = page.size() == limit;
  const std::string last_key = page.empty() ? catch_up_key_ : page.back().reference_id;
  // Rows whose updated_at is ahead of the clock are rejected with the reason, as the feed reports them.
  const merchant::ChangeCursor reach = merchant::ChangeFeed<Row>::read_limit(options_.feed, timestamps::Clock::now());
  std::vector<Row> rows;
  std::vector<Row> ahead;
  for (Row& row : page) {
    const merchant::ChangeCursor at{row.change_time, row.reference_id};
    if (at < reach) {
      caught_up_through_ = std::max(caught_up_through_, at);
      rows.push_back(std::move(row));
    } else {
      ahead.push_back(std::move(row));
    }
  }
  if (!rows.empty() || !ahead.empty() || !held_.empty()) {
    std::optional<std::string> held_before = catch_up_held_before_;
    offer(rows, ahead, [&] {
      // Stay before every held row, so that a restart reads it again.
      if (held_.empty()) {
        held_before.reset();
      } else if (!held_before) {
        held_before = catch_up_key_;
      }
      store_.save_cursor(catch_up_name(), held_before.value_or(last_key));
    });
    catch_up_held_before_ = std::move(held_before);
  }
  catch_up_key_ = last_key;
  return full;
}

template <typename Row>
void SourceIntake<Row>::end_catch_up() {
  // The read position by updated_at, for a reader without the log: past every row handed out.
  store_.save_cursor(cursor_name(), encode_cursor(caught_up_through_));
  catching_up_ = false;
  prune_owed_ = true;  // what the log held before its position was handled by the catch-up
  unpruned_ = kPruneBatch;
  save_sequence();
  spdlog::info("{}: rows changed before the change log are read; reading by the change log from here on",
               cursor_name().substr(cursor_name().find(':') + 1));
}

template <typename Row>
merchant::ChangeCursor SourceIntake<Row>::starting_cursor() const {
  // In the form rows' change times take (sync.orders_since may be written `2026-03-01T00:00:00Z`).
  const auto since = timestamps::parse_iso8601(options_.starting_point);
  return {since ? timestamps::format_iso8601_z(*since) : options_.starting_point, ""};
}

template <typename Row>
merchant::ChangeFeed<Row> SourceIntake<Row>::make_feed() {
  const merchant::ChangeCursor floor = starting_cursor();
  merchant::ChangeCursor start = floor;
  const auto saved = store_.cursor(cursor_name());
  const auto cursor = saved ? decode_cursor(*saved) : std::nullopt;
  if (cursor && *cursor > floor &&
      *cursor > merchant::ChangeFeed<Row>::read_limit(options_.feed, timestamps::Clock::now())) {
    // Saved by a version that let a row's updated_at far in the future move it: every row written
    // since sorts before it. Rows read again are recognised by the ledger, not sent twice.
    spdlog::warn("{}: the saved read position {} is ahead of this server's clock; reading again from the "
                 "starting point {}",
                 cursor_name(), text::printable(cursor->updated_at), floor.updated_at);
  } else if (cursor) {
    start = std::max(*cursor, floor);
  }
  return merchant::ChangeFeed<Row>(source_, options_.feed, start, floor);
}

template <typename Row>
bool SourceIntake<Row>::poll(int max_batches) {
  skus_.clear();  // the map as it is now
  skus_looked_up_.clear();
  try {
    const bool more = by_sequence_ ? poll_by_sequence(max_batches) : poll_by_time(max_batches);
    if (more || options_.reconcile_interval.count() == 0 || timestamps::Clock::now() < next_sweep_) return more;
    return sweep();
  } catch (...) {
    // The feed has moved past rows the ledger did not keep: start again from the saved position.
    feed_ = std::make_unique<merchant::ChangeFeed<Row>>(make_feed());
    // The log's position too, which is before every row held (those are cleared here) and which a
    // failed commit did not move.
    sequence_ = saved_position_;
    sequence_pending_ = true;
    held_.clear();
    held_before_.reset();
    catch_up_key_ = catch_up_held_before_.value_or(catch_up_key_);
    catch_up_held_before_.reset();
    throw;
  }
}

template <typename Row>
bool SourceIntake<Row>::poll_by_time(int max_batches) {
  bool more = true;
  for (int i = 0; i < max_batches && more; ++i) {
    auto batch = feed_->poll();
    more = batch.more;
    if (batch.rereads) notice_rows_behind(batch.rows, "the look-back window found it");
    if (batch.rows.empty() && batch.ahead.empty() && held_.empty()) continue;
    offer(batch.rows, batch.ahead, [&] { save_cursor(); });
  }
  return more;
}

template <typename Row>
bool SourceIntake<Row>::poll_by_sequence(int max_batches) {
  constexpr merchant::SourceKind kind = source_kind<Row>();
  if (prune_owed_ && prune_due()) prune_change_log();
  bool more = true;
  for (int i = 0; i < max_batches && more; ++i) {
    if (catching_up_) {
      if (catch_up()) continue;
      // Read to the end; it ends once no row it read is held (a restart would not read it again),
      // which the next poll tries again.
      more = !catch_up_held_before_;
      if (more) end_catch_up();
      continue;
    }
    if (!sequence_pending_) {
      // Read before the log, so a commit that lands while it is read is seen by the next poll.
      const std::uint64_t counter = source_.change_counter();
      if (counter_ == counter && held_.empty()) {
        // Nothing new: a quiet moment to delete what was handled.
        tidy();
        return false;
      }
      counter_ = counter;
      // Until this read goes through, the next poll reads again whatever the counter says: a read
      // that failed (a statement timeout, a lost connection) must not wait for another commit.
      sequence_pending_ = true;
    }
    const merchant::ChangedKeys changes = source_.changes_after(kind, sequence_, options_.feed.batch_size);
    if (changes.entries == 0 && held_.empty()) {
      // Another table's commit, or the daemon's own result writes: nothing to offer or save, and
      // as quiet a moment as an unchanged counter to delete what was handled.
      tidy();
      sequence_pending_ = more = false;
      continue;
    }
    std::vector<Row> rows = [&] {
      if constexpr (std::is_same_v<Row, OrderRow>) return source_.read_orders(changes.keys);
      else return source_.read_returns(changes.keys);
    }();
    if (!rows.empty() && fault("intake.drop_one_change")) {
      spdlog::warn("{} {}: its change dropped (fault intake.drop_one_change)", noun<Row>(),
                   text::printable(rows.front().reference_id));
      rows.erase(rows.begin());
    }
    for (const Row& row : rows) notice_clock_step(row);
    const std::string before = sequence_;
    offer(rows, {}, [&] {
      if (held_.empty()) {
        held_before_.reset();
      } else if (!held_before_) {
        held_before_ = before;
      }
      sequence_ = changes.through;
      save_sequence();
    });
    prune_owed_ = prune_owed_ || changes.entries > 0;
    unpruned_ += changes.entries;
    sequence_pending_ = changes.more;
    more = changes.more;
  }
  if (prune_owed_ && !more && prune_due()) prune_change_log();
  return more;
}

template <typename Row>
void SourceIntake<Row>::tidy() {
  if (prune_owed_) prune_change_log();
}

template <typename Row>
bool SourceIntake<Row>::prune_due() const {
  return unpruned_ >= kPruneBatch || timestamps::Clock::now() >= next_prune_;
}

template <typename Row>
template <typename Save>
void SourceIntake<Row>::offer(const std::vector<Row>& rows, const std::vector<Row>& ahead, Save save) {
  // Not synced: lost to a power cut, the rows are read again from the position saved before (the
  // log is pruned only through a position on disk), and every send's mark syncs what came before it.
  // Rows whose version the ledger has already are skipped without building their bodies.
  std::vector<std::string> keys;
  keys.reserve(rows.size() + ahead.size());
  for (const Row& row : rows) keys.push_back(row.reference_id);
  for (const Row& row : ahead) keys.push_back(row.reference_id);
  auto known = ledger_.hashes(create_kind<Row>(), keys);
  std::map<std::string, std::string, std::less<>> cancels;
  if constexpr (std::is_same_v<Row, OrderRow>) cancels = ledger_.hashes(LedgerKind::order_cancel, keys);

  look_up_skus(rows);  // once for the batch
  auto commit = ledger_.batch(OutboundLedger::Durability::with_next);
  // A row read now is its latest version: an older one held back must not be offered after it
  // (it could bring back an order the newer version cancelled).
  for (const Row& row : rows) held_.erase(row.reference_id);
  for (const Row& row : ahead) held_.erase(row.reference_id);
  for (auto it = held_.begin(); it != held_.end();) {
    const Row row = std::move(it->second);
    it = held_.erase(it);
    take(row);  // held again when still in flight
  }
  for (const Row& row : rows) {
    if constexpr (std::is_same_v<Row, OrderRow>) {
      if (cancel_requested(row)) {
        if (!cancels.contains(row.reference_id)) take(row);
        continue;
      }
    }
    const auto found = known.find(row.reference_id);
    if (found == known.end()) {
      take(row, false);
      // A key read twice in one batch (a view can give duplicates) finds this version next time.
      known.emplace(row.reference_id, row.content_hash);
    } else if (found->second != row.content_hash) {
      take(row);
    }
  }
  for (const Row& row : ahead) {
    const auto found = known.find(row.reference_id);
    if (found == known.end() || found->second != ahead_version(row)) {
      reject_ahead(ledger_, metrics_, row, options_.feed.max_clock_skew);
    }
  }
  failpoint("intake.before_commit");
  // What save() records is the store's only once committed: after a commit that fails (a full disk)
  // the store holds the position before, and so must saved_position_, which poll() goes back to.
  const std::string saved_position = saved_position_;
  const std::uint64_t synced_commits_at_save = synced_commits_at_save_;
  try {
    save();
    commit.commit();
  } catch (...) {
    saved_position_ = saved_position;
    synced_commits_at_save_ = synced_commits_at_save;
    throw;
  }
}

template <typename Row>
void SourceIntake<Row>::save_sequence() {
  // Stay before every held row, so that a restart reads it again.
  const std::string& position = held_before_.value_or(sequence_);
  position_on_disk();  // the save before this one may be
  store_.save_cursor(sequence_name(), catching_up_ ? fmt::format("catch-up {}", position) : position);
  saved_position_ = position;  // once written: a write that fails leaves the position before
  synced_commits_at_save_ = store_.synced_commits();
}

template <typename Row>
const std::string& SourceIntake<Row>::position_on_disk() {
  if (store_.synced_commits() > synced_commits_at_save_) durable_position_ = saved_position_;
  return durable_position_;
}

template <typename Row>
void SourceIntake<Row>::prune_change_log() {
  // Only what the checkpoint store holds as handled, on disk; a crash before that repeats reads,
  // never skips. Entries handled after that position wait for a synced commit to cover it.
  const std::string through = position_on_disk();
  if (through == pruned_through_) return;  // deleted through it already
  prune_owed_ = false;
  unpruned_ = 0;
  next_prune_ = timestamps::Clock::now() + kPruneEvery;
  try {
    const std::int64_t deleted =
        source_.forget_changes_through(source_kind<Row>(), through, static_cast<std::size_t>(kPruneBatch));
    prune_owed_ = deleted == kPruneBatch;
    if (prune_owed_) unpruned_ = kPruneBatch;  // more to delete: the next poll goes on
    else pruned_through_ = through;
    if (through != held_before_.value_or(sequence_)) prune_owed_ = true;
  } catch (const merchant::MerchantDatabaseError& e) {
    // The log only grows meanwhile; reading is not affected.
    spdlog::warn("{}: cannot delete handled change log entries (tried again after the next change): {}",
                 cursor_name(), e.what());
  }
}

template <typename Row>
bool SourceIntake<Row>::sweep() {
  constexpr merchant::SourceKind kind = source_kind<Row>();
  const std::string_view table = std::is_same_v<Row, OrderRow> ? merchant::kOrdersTable : merchant::kReturnsTable;
  const std::size_t limit = options_.feed.batch_size;
  // The hashes come from the database; only the rows found missed are read whole.
  const OpenRowsPage page = compare_open_rows(source_, ledger_, kind, options_.starting_point, swept_through_, limit);
  if (!page.last_key.empty()) swept_through_ = page.last_key;

  // Whether change detection should have taken this version: not when it is being sent (offered
  // again each poll), nor when the feed has not read it yet (it has caught up, but a commit may have
  // landed since).
  const auto change_detection_passed = [&](std::string_view key, const std::string& change_time) {
    if (held_.contains(key)) return false;
    return by_sequence_ || merchant::ChangeCursor{change_time, std::string(key)} <= feed_->cursor();
  };
  std::vector<std::string> keys;
  for (const merchant::OpenRowVersion& row : page.lacking) {
    if (change_detection_passed(row.reference_id, row.change_time)) keys.push_back(row.reference_id);
  }
  if (by_sequence_ && !keys.empty()) {
    // Changes committed since the last read of the log are the log's to take, not missed.
    const merchant::ChangedKeys pending = source_.changes_after(kind, sequence_, 4 * limit);
    std::erase_if(keys, [&](const std::string& key) {
      return std::find(pending.keys.begin(), pending.keys.end(), key) != pending.keys.end();
    });
  }
  // Checked again on the rows read whole: one changed since the comparison may be the ledger's now.
  std::vector<Row> missed;
  if (!keys.empty()) {
    std::vector<Row> rows = [&] {
      if constexpr (std::is_same_v<Row, OrderRow>) return source_.read_orders(keys);
      else return source_.read_returns(keys);
    }();
    const LedgerVersions in_ledger(ledger_, kind, keys, options_.starting_point);
    for (Row& row : rows) {
      if (change_detection_passed(row.reference_id, row.change_time) && in_ledger.lacks(version_of(row))) {
        missed.push_back(std::move(row));
      }
    }
  }
  if (!by_sequence_) notice_rows_behind(missed, "the reconciliation sweep found it");
  if (!missed.empty()) {
    auto commit = ledger_.batch();
    for (const Row& row : missed) {
      metrics_.count_reconcile_found(table);
      spdlog::warn("{} {}: found by the reconciliation sweep: change detection missed this version (a bug or a "
                   "clock problem to investigate; updated_at {}); taken now",
                   noun<Row>(), text::printable(row.reference_id), merchant::Field::of(row.updated_at).describe());
      take(row);
    }
    commit.commit();
  }
  swept_ += static_cast<std::int64_t>(page.compared);
  sweep_found_ += static_cast<std::int64_t>(missed.size());
  if (page.more) return true;
  spdlog::log(sweep_found_ > 0 ? spdlog::level::warn : spdlog::level::info,
              "{}: reconciliation sweep compared {} open rows with the ledger; {} missed by change detection", table,
              swept_, sweep_found_);
  swept_through_.clear();
  swept_ = sweep_found_ = 0;
  next_sweep_ = timestamps::Clock::now() + options_.reconcile_interval;
  return false;
}

template <typename Row>
void SourceIntake<Row>::notice_clock_step(const Row& row) {
  // updated_at decides nothing here; a row older than one already read by more than look_back still
  // says that a clock stepped back (or the application wrote an old time), which someone should know.
  const auto when = timestamps::parse_iso8601(row.change_time);
  if (!when) return;
  if (newest_change_ && *when + options_.feed.look_back < *newest_change_) {
    clock_stepped_back(row, *newest_change_, "a change read before it", "the change log still found it");
  }
  if (!newest_change_ || *when > *newest_change_) newest_change_ = *when;
}

template <typename Row>
void SourceIntake<Row>::notice_rows_behind(const std::vector<Row>& rows, std::string_view found_by) {
  // Reading by updated_at, the read position had passed a new version older than it by more than
  // look_back: its clock stepped back (or the application wrote an old time). Versions the ledger
  // holds were read when they were new.
  const auto position = timestamps::parse_iso8601(feed_->cursor().updated_at);
  if (!position) return;
  std::vector<const Row*> behind;
  std::vector<std::string> keys;
  for (const Row& row : rows) {
    const auto when = timestamps::parse_iso8601(row.change_time);
    if (when && *when + options_.feed.look_back < *position) {
      behind.push_back(&row);
      keys.push_back(row.reference_id);
    }
  }
  if (behind.empty()) return;
  const auto known = ledger_.hashes(create_kind<Row>(), keys);
  std::map<std::string, std::string, std::less<>> cancels;
  if constexpr (std::is_same_v<Row, OrderRow>) cancels = ledger_.hashes(LedgerKind::order_cancel, keys);
  for (const Row* row : behind) {
    bool seen = false;
    if constexpr (std::is_same_v<Row, OrderRow>) seen = cancel_requested(*row) && cancels.contains(row->reference_id);
    const auto create = known.find(row->reference_id);
    seen = seen || (create != known.end() && create->second == row->content_hash);
    if (!seen) clock_stepped_back(*row, *position, "the read position", found_by);
  }
}

template <typename Row>
void SourceIntake<Row>::clock_stepped_back(const Row& row, timestamps::TimePoint passed, std::string_view what_passed,
                                           std::string_view found_by) {
  metrics_.count_clock_step_back(create_kind<Row>());
  // Once per step: every row written after it is older than the same position.
  const bool new_step = step_reported_ != passed;
  step_reported_ = passed;
  spdlog::log(new_step ? spdlog::level::warn : spdlog::level::debug,
              "{} {}: updated_at {} is older than {} ({}) by more than merchant.look_back: the merchant's clock "
              "stepped back; {}{}",
              noun<Row>(), text::printable(row.reference_id), merchant::Field::of(row.updated_at).describe(),
              what_passed, timestamps::format_iso8601_z(passed), found_by,
              new_step ? " (rows of this step after it are counted in fulfillsync_source_clock_steps_back_total, "
                         "logged at debug)"
                       : "");
}

template <typename Row>
void SourceIntake<Row>::refresh(std::span<const std::string> keys) {
  const std::vector<Row> rows = [&] {
    if constexpr (std::is_same_v<Row, OrderRow>) return source_.read_orders(keys);
    else return source_.read_returns(keys);
  }();
  skus_.clear();
  skus_looked_up_.clear();
  look_up_skus(rows);
  const merchant::ChangeCursor limit = merchant::ChangeFeed<Row>::read_limit(options_.feed, timestamps::Clock::now());
  const auto known = ledger_.hashes(create_kind<Row>(), keys);
  for (const Row& row : rows) {
    held_.erase(row.reference_id);  // superseded by the version read now
    if (!by_sequence_ && merchant::ChangeCursor{row.change_time, row.reference_id} >= limit) {
      reject_ahead(ledger_, metrics_, row, options_.feed.max_clock_skew);
    } else if (const auto found = known.find(row.reference_id);
               found == known.end() || found->second != row.content_hash) {
      take(row);  // a new version
    } else {
      ledger_.note_read(create_kind<Row>(), row.reference_id);  // unchanged: its body is current
    }
  }
}

template <typename Row>
void SourceIntake<Row>::save_cursor() {
  merchant::ChangeCursor cursor = feed_->cursor();
  // Stay before every held row, so that a restart reads it again.
  for (const auto& [key, row] : held_) cursor = std::min(cursor, merchant::ChangeCursor{row.change_time, ""});
  store_.save_cursor(cursor_name(), encode_cursor(cursor));
}

template <typename Row>
void SourceIntake<Row>::take(const Row& row, bool in_ledger) {
  constexpr LedgerKind kind = create_kind<Row>();
  constexpr std::string_view job = create_job<Row>();
  const std::string& key = row.reference_id;

  if constexpr (std::is_same_v<Row, OrderRow>) {
    if (cancel_requested(row)) {
      const auto create = ledger_.find(kind, key);
      if (create && create->state == LedgerState::withdrawn) return;
      if (!create || create->state == LedgerState::pending || create->state == LedgerState::rejected) {
        // Not known here as created, which is not knowing it was never sent (a store restored from an
        // older copy, or lost): the provider is asked by reference first. Found, it is adopted and
        // the cancel below is sent; absent, both are withdrawn (CreatePushJob::reconcile).
        ledger_.look_up_first(kind, key, row.content_hash, kCancelLooksUpCreate);
        metrics_.count_items(job, "unknown");
        spdlog::info("order {}: {}", text::printable(key), kCancelLooksUpCreate);
      }
      // Sent, being sent or looked up: the cancel follows once the create is settled.
      ledger_.offer(LedgerKind::order_cancel, key, row.content_hash, "");
      spdlog::debug("order {}: cancel queued", text::printable(key));
      return;
    }
  }

  look_up_skus(std::span(&row, 1));
  const BuiltBody built = build_body(row, options_.version, skus_);
  const std::string_view body = built.body ? std::string_view(*built.body) : std::string_view();
  const Offer offer = in_ledger ? ledger_.offer(kind, key, row.content_hash, body)
                                : ledger_.offer(kind, key, row.content_hash, body, std::nullopt);
  switch (offer) {
    case Offer::queued:
      if (!built.body) {
        ledger_.mark_rejected(kind, key, built.problems);
        metrics_.count_items(job, "invalid");
        spdlog::warn("{} {} rejected: {}", noun<Row>(), text::printable(key), built.problems);
      }
      break;
    case Offer::unchanged: break;
    case Offer::held: held_.insert_or_assign(key, row); break;
    case Offer::already_sent:
      metrics_.count_unapplied_change(kind);
      spdlog::warn("{} {} {} (noted in the result table)", noun<Row>(), text::printable(key), kChangedAfterSending);
      break;
  }
}

template <typename Row>
void SourceIntake<Row>::look_up_skus(std::span<const Row> rows) {
  if (!options_.sku_map) return;
  std::vector<std::string> wanted;
  for (const Row& row : rows) {
    for (std::string& sku : skus_named(row)) {
      if (skus_looked_up_.insert(sku).second) wanted.push_back(std::move(sku));
    }
  }
  if (wanted.empty()) return;
  for (auto& [sku, mapping] : options_.sku_map(wanted)) skus_.insert_or_assign(sku, mapping);
}

template class SourceIntake<OrderRow>;
template class SourceIntake<ReturnRow>;

}  // namespace fulfillsync::daemon
