#include "fulfillsync/daemon/store/tracking_mark_ledger.hpp"

#include "fulfillsync/common/invariant.hpp"
#include "fulfillsync/common/sql_pages.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>

namespace fulfillsync::daemon {
namespace {

constexpr const char* kColumns =
    "shipment_id, order_id, state, attempts, coalesce(last_error, ''), updated_at, "
    "CAST(round((julianday('now') - julianday(created_at)) * 86400000) AS INTEGER)";

MarkState state_from(std::string_view text) {
  if (text == "pending") return MarkState::pending;
  if (text == "in_flight") return MarkState::in_flight;
  if (text == "marked") return MarkState::marked;
  if (text == "unknown") return MarkState::unknown;
  FULFILLSYNC_UNREACHABLE("the schema's CHECK allows no other mark state");
}

std::vector<TrackingMark> marks_of(SQLite::Statement& query) {
  std::vector<TrackingMark> marks;
  while (query.executeStep()) {
    marks.push_back(TrackingMark{.shipment_id = query.getColumn(0).getInt64(),
                                 .order_id = query.getColumn(1).getInt64(),
                                 .state = state_from(query.getColumn(2).getString()),
                                 .attempts = query.getColumn(3).getInt(),
                                 .last_error = query.getColumn(4).getString(),
                                 .updated_at = query.getColumn(5).getString(),
                                 .queued_for = std::chrono::milliseconds(query.getColumn(6).getInt64())});
  }
  return marks;
}

}  // namespace

std::string_view to_string(MarkState state) {
  switch (state) {
    case MarkState::pending: return "pending";
    case MarkState::in_flight: return "in_flight";
    case MarkState::marked: return "marked";
    case MarkState::unknown: return "unknown";
  }
  return "pending";
}

TrackingMarkLedger::TrackingMarkLedger(CheckpointStore& store) : store_(store) {}

TrackingMarkLedger::Batch::Batch(TrackingMarkLedger& ledger)
    : transaction_(ledger.store_) {}

void TrackingMarkLedger::Batch::commit() { transaction_.commit(); }

int TrackingMarkLedger::recover_interrupted() {
  ++writes_;
  return store_.database().exec(
      fmt::format("UPDATE tracking_marks SET state = 'unknown', last_error = 'interrupted while in flight', "
                  "updated_at = {} WHERE state = 'in_flight'",
                  kSqlNow));
}

int TrackingMarkLedger::offer(std::span<const merchant::TrackingToMark> shipments) {
  // A page of shipments a statement: every run offers all the merchant's rows still to be marked, most
  // of them already queued.
  constexpr std::size_t kShipmentsPerStatement = 100;
  static const sql::PagedStatement paged(kShipmentsPerStatement, [](std::size_t rows) {
    return fmt::format(
        "INSERT INTO tracking_marks (shipment_id, order_id, state, next_attempt_at, created_at, updated_at) "
        "SELECT column1, column2, 'pending', {0}, {0}, {0} FROM (VALUES {1}) WHERE column1 IS NOT NULL "
        "ON CONFLICT (shipment_id) DO NOTHING",
        kSqlNow, sql::parameter_rows(rows, 2, 1));
  });
  int added = 0;
  paged.for_each_page(shipments, [&](std::span<const merchant::TrackingToMark> page, const std::string& sql) {
    SQLite::Statement& insert = store_.prepared(sql);
    for (std::size_t i = 0; i < page.size(); ++i) {
      insert.bind(static_cast<int>(2 * i + 1), static_cast<int64_t>(page[i].shipment_id));
      insert.bind(static_cast<int>(2 * i + 2), static_cast<int64_t>(page[i].order_id));
    }
    added += insert.exec();
  });
  if (added > 0) ++writes_;
  return added;
}

std::vector<TrackingMark> TrackingMarkLedger::due(int limit) {
  SQLite::Statement& query = store_.prepared(fmt::format(
      "SELECT {} FROM tracking_marks WHERE state = 'pending' AND next_attempt_at <= {} "
      "ORDER BY next_attempt_at, shipment_id LIMIT ?",
      kColumns, kSqlNow));
  query.bind(1, limit);
  return marks_of(query);
}

std::vector<TrackingMark> TrackingMarkLedger::in_state(MarkState state, int limit) {
  SQLite::Statement& query = store_.prepared(
      fmt::format("SELECT {} FROM tracking_marks WHERE state = ? ORDER BY updated_at, shipment_id LIMIT ?", kColumns));
  query.bind(1, std::string(to_string(state)));
  query.bind(2, limit);
  return marks_of(query);
}

std::vector<TrackingMark> TrackingMarkLedger::unclear(std::chrono::milliseconds quiet, int limit) {
  SQLite::Statement& query = store_.prepared(fmt::format(
      "SELECT {} FROM tracking_marks WHERE state = 'unknown' "
      "AND updated_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?) ORDER BY updated_at, shipment_id LIMIT ?",
      kColumns));
  query.bind(1, sql_modifier_ago(quiet));
  query.bind(2, limit);
  return marks_of(query);
}

void TrackingMarkLedger::transition(std::int64_t shipment_id, std::initializer_list<MarkState> from, MarkState to,
                                    std::optional<std::string_view> error,
                                    std::optional<std::chrono::seconds> retry_after, bool count_attempt) {
  ++writes_;
  std::string allowed;
  for (const MarkState state : from) allowed += fmt::format("{}'{}'", allowed.empty() ? "" : ", ", to_string(state));
  // A settled state (marked, or a failure with its reason) is what the merchant's row shows next.
  const bool settles = to == MarkState::marked || (to == MarkState::pending && error.has_value());
  SQLite::Statement& update = store_.prepared(fmt::format(
      "UPDATE tracking_marks SET state = ?1, attempts = attempts + ?2, last_error = ?3, "
      "next_attempt_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?4), result_pending = result_pending OR ?5, "
      "updated_at = {} WHERE shipment_id = ?6 AND state IN ({})",
      kSqlNow, allowed));
  update.bind(1, std::string(to_string(to)));
  update.bind(2, count_attempt ? 1 : 0);
  if (error) {
    update.bind(3, std::string(*error));
  } else {
    update.bind(3);
  }
  update.bind(4, fmt::format("+{} seconds", retry_after.value_or(std::chrono::seconds(0)).count()));
  update.bind(5, settles ? 1 : 0);
  update.bind(6, static_cast<int64_t>(shipment_id));
  const int changed = update.exec();
  FULFILLSYNC_INVARIANT(changed == 1, "a mark moves only from the states its transition allows");
}

void TrackingMarkLedger::mark_in_flight(std::int64_t shipment_id) {
  transition(shipment_id, {MarkState::pending}, MarkState::in_flight, std::nullopt, std::nullopt, true);
}

void TrackingMarkLedger::mark_marked(std::int64_t shipment_id) {
  transition(shipment_id, {MarkState::in_flight, MarkState::unknown}, MarkState::marked, std::nullopt, std::nullopt,
             false);
}

void TrackingMarkLedger::mark_failed(std::int64_t shipment_id, std::string_view reason,
                                     std::chrono::seconds retry_after) {
  transition(shipment_id, {MarkState::in_flight}, MarkState::pending, reason, retry_after, false);
}

void TrackingMarkLedger::mark_not_sent(std::int64_t shipment_id) {
  ++writes_;
  // The attempt counted by mark_in_flight is taken back: nothing reached the provider.
  SQLite::Statement& update = store_.prepared(fmt::format(
      "UPDATE tracking_marks SET state = 'pending', attempts = max(attempts - 1, 0), next_attempt_at = {0}, "
      "updated_at = {0} WHERE shipment_id = ? AND state = 'in_flight'",
      kSqlNow));
  update.bind(1, static_cast<int64_t>(shipment_id));
  const int changed = update.exec();
  FULFILLSYNC_INVARIANT(changed == 1, "only a mark in flight can come back unsent");
}

void TrackingMarkLedger::mark_unknown(std::int64_t shipment_id, std::string_view reason) {
  transition(shipment_id, {MarkState::in_flight}, MarkState::unknown, reason, std::nullopt, false);
}

void TrackingMarkLedger::mark_absent(std::int64_t shipment_id) {
  transition(shipment_id, {MarkState::unknown}, MarkState::pending, std::nullopt, std::nullopt, false);
}

void TrackingMarkLedger::forget_pending(std::int64_t shipment_id) {
  ++writes_;
  SQLite::Statement& drop = store_.prepared("DELETE FROM tracking_marks WHERE shipment_id = ? AND state = 'pending'");
  drop.bind(1, static_cast<int64_t>(shipment_id));
  drop.exec();
}

std::vector<merchant::TrackingMarkResult> TrackingMarkLedger::unwritten_results(int limit) {
  SQLite::Statement& query = store_.prepared(
      // Only settled states: a mark sent again meanwhile reports when it settles once more.
      "SELECT shipment_id, state, attempts, last_error, updated_at FROM tracking_marks WHERE result_pending = 1 "
      "AND (state = 'marked' OR (state = 'pending' AND last_error IS NOT NULL)) ORDER BY shipment_id LIMIT ?");
  query.bind(1, limit);
  std::vector<merchant::TrackingMarkResult> results;
  while (query.executeStep()) {
    merchant::TrackingMarkResult result{.shipment_id = query.getColumn(0).getInt64(),
                                        .attempts = query.getColumn(2).getInt()};
    if (query.getColumn(1).getString() == "marked") {
      result.marked_at = query.getColumn(4).getString();
    } else if (!query.getColumn(3).isNull()) {
      result.error = query.getColumn(3).getString();
    }
    results.push_back(std::move(result));
  }
  return results;
}

void TrackingMarkLedger::results_written(std::span<const merchant::TrackingMarkResult> results) {
  ++writes_;
  SQLite::Statement& drop = store_.prepared("DELETE FROM tracking_marks WHERE shipment_id = ? AND state = 'marked'");
  SQLite::Statement& keep =
      store_.prepared("UPDATE tracking_marks SET result_pending = 0 WHERE shipment_id = ? AND state <> 'marked'");
  for (const auto& result : results) {
    SQLite::Statement& statement = result.marked_at ? drop : keep;
    statement.reset();
    statement.bind(1, static_cast<int64_t>(result.shipment_id));
    statement.exec();
  }
}

int TrackingMarkLedger::waiting() {
  SQLite::Statement& query = store_.prepared(
      "SELECT count(*) FROM tracking_marks WHERE state IN ('in_flight', 'unknown') "
      "OR (state = 'pending' AND last_error IS NULL)");
  query.executeStep();
  const int count = query.getColumn(0).getInt();
  query.reset();
  return count;
}

int TrackingMarkLedger::failing() {
  SQLite::Statement& query =
      store_.prepared("SELECT count(*) FROM tracking_marks WHERE state = 'pending' AND last_error IS NOT NULL");
  query.executeStep();
  const int count = query.getColumn(0).getInt();
  query.reset();
  return count;
}

std::map<MarkState, int> TrackingMarkLedger::counts() {
  SQLite::Statement& query = store_.prepared("SELECT state, count(*) FROM tracking_marks GROUP BY state");
  std::map<MarkState, int> counts;
  while (query.executeStep()) counts[state_from(query.getColumn(0).getString())] = query.getColumn(1).getInt();
  return counts;
}

}  // namespace fulfillsync::daemon
