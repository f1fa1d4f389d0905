#include "sqlite_sync_results.hpp"

namespace fulfillsync::merchant {
namespace {

// The result table's columns, as read back by read_result_row().
std::string result_columns(SourceKind kind) {
  std::string columns =
      "reference_id, state, remote_id, remote_status, last_error, note, attempts, content_hash, first_seen_at, "
      "updated_at, remote_created_at";
  if (kind == SourceKind::orders) columns += ", cancel_requested_at, cancelled_at";
  return columns;
}

SyncResult read_result_row(SQLite::Statement& query, SourceKind kind) {
  SyncResult result;
  result.reference_id = query.getColumn(0).getString();
  result.state = query.getColumn(1).getString();
  if (!query.getColumn(2).isNull()) result.remote_id = query.getColumn(2).getInt64();
  result.remote_status = optional_text(query.getColumn(3));
  result.last_error = optional_text(query.getColumn(4));
  result.note = optional_text(query.getColumn(5));
  result.attempts = query.getColumn(6).getInt64();
  result.content_hash = optional_text(query.getColumn(7));
  result.first_seen_at = optional_time(query.getColumn(8));
  result.updated_at = optional_time(query.getColumn(9)).value_or(timestamps::TimePoint{});
  result.remote_created_at = optional_time(query.getColumn(10));
  if (kind == SourceKind::orders) {
    result.cancel_requested_at = optional_time(query.getColumn(11));
    result.cancelled_at = optional_time(query.getColumn(12));
  }
  return result;
}

}  // namespace

void SqliteSyncResults::write_results(SourceKind kind, std::span<const SyncResult> results) {
  if (results.empty()) return;
  const bool orders = kind == SourceKind::orders;
  connection_.in_write_transaction(fmt::format("writing {}", connection_.result_table(kind)), [&] {
    Upsert upsert(db(), connection_.result_table(kind),
                  {.key = {"reference_id"},
                   .insert_only = {"first_seen_at"},
                   // Once a pull has written the provider's status (remote_updated_at), it is newer than
                   // what the create or cancel answer said: a later ledger write (a note, a replay) must
                   // not bring that back.
                   .set = {{"remote_status",
                            "CASE WHEN remote_updated_at IS NULL THEN excluded.remote_status ELSE remote_status END"}},
                   // An older result replayed after a newer one changes nothing.
                   .where = "excluded.updated_at >= updated_at"});
    std::vector<Named> row;
    for (const SyncResult& result : results) {
      row = {{"reference_id", result.reference_id},
             {"state", result.state},
             {"remote_id", result.remote_id},
             {"remote_status", result.remote_status},
             {"last_error", result.last_error},
             {"note", result.note},
             {"attempts", result.attempts},
             {"content_hash", result.content_hash},
             {"first_seen_at", result.updated_at},
             {"updated_at", result.updated_at},
             {"remote_created_at", result.remote_created_at}};
      if (orders) {
        row.push_back({"cancel_requested_at", result.cancel_requested_at});
        row.push_back({"cancelled_at", result.cancelled_at});
      }
      upsert.write(row);
    }
  });
}

std::map<std::string, std::int64_t> SqliteSyncResults::count_results_by_state(SourceKind kind) {
  return connection_.guarded(fmt::format("reading {}", connection_.result_table(kind)), [&] {
    std::map<std::string, std::int64_t> counts;
    SQLite::Statement query(db(), "SELECT state, count(*) FROM " + connection_.result_table(kind) + " GROUP BY state");
    while (query.executeStep()) counts[query.getColumn(0).getString()] = query.getColumn(1).getInt64();
    return counts;
  });
}

std::vector<SyncResult> SqliteSyncResults::latest_results(SourceKind kind, std::string_view state, std::size_t limit) {
  return connection_.guarded(fmt::format("reading {}", connection_.result_table(kind)), [&] {
    SQLite::Statement query(db(), "SELECT " + result_columns(kind) + " FROM " + connection_.result_table(kind) +
                                      " WHERE state = ? ORDER BY updated_at DESC, reference_id LIMIT ?");
    query.bind(1, std::string(state));
    query.bind(2, static_cast<int64_t>(limit));
    std::vector<SyncResult> results;
    while (query.executeStep()) results.push_back(read_result_row(query, kind));
    return results;
  });
}

std::vector<SyncResult> SqliteSyncResults::results_after(SourceKind kind, std::string_view after_reference_id,
                                                         std::size_t limit) {
  return connection_.guarded(fmt::format("reading {}", connection_.result_table(kind)), [&] {
    SQLite::Statement query(db(), "SELECT " + result_columns(kind) + " FROM " + connection_.result_table(kind) +
                                      " WHERE reference_id > ? ORDER BY reference_id LIMIT ?");
    query.bind(1, std::string(after_reference_id));
    query.bind(2, static_cast<int64_t>(limit));
    std::vector<SyncResult> results;
    while (query.executeStep()) results.push_back(read_result_row(query, kind));
    return results;
  });
}

std::optional<SyncResult> SqliteSyncResults::read_result(SourceKind kind, std::string_view reference_id) {
  return connection_.guarded(
      fmt::format("reading {}", connection_.result_table(kind)), [&]() -> std::optional<SyncResult> {
        SQLite::Statement query(db(), "SELECT " + result_columns(kind) + " FROM " + connection_.result_table(kind) +
                                          " WHERE reference_id = ?");
        query.bind(1, std::string(reference_id));
        if (!query.executeStep()) return std::nullopt;
        return read_result_row(query, kind);
      });
}

std::vector<SyncResult> SqliteSyncResults::cancel_mismatches(std::size_t limit) {
  const std::string table = connection_.result_table(SourceKind::orders);
  return connection_.guarded(fmt::format("reading {}", table), [&] {
    // Only while the merchant's row still asks for the cancel: clearing cancel_requested is how the
    // merchant accepts the delivery. A `cancelled` row keeps the status pulled before its cancel
    // until the next pull: only a status the provider changed after the cancel contradicts it.
    SQLite::Statement query(
        db(), "SELECT " + result_columns(SourceKind::orders) + " FROM " + table +
                  " AS r WHERE remote_id IS NOT NULL AND remote_status IS NOT NULL AND remote_status <> 'Cancelled'"
                  " AND (state = 'cancel_rejected' OR (state = 'cancelled' AND remote_updated_at IS NOT NULL AND"
                  " (cancelled_at IS NULL OR julianday(remote_updated_at) > julianday(cancelled_at))))"
                  " AND EXISTS (SELECT 1 FROM " + sql_name(kOrdersTable) +
                  " AS o WHERE o.reference_id = r.reference_id AND o.cancel_requested = 1)"
                  " ORDER BY reference_id LIMIT ?");
    query.bind(1, static_cast<int64_t>(limit));
    std::vector<SyncResult> results;
    while (query.executeStep()) results.push_back(read_result_row(query, SourceKind::orders));
    return results;
  });
}

}  // namespace fulfillsync::merchant
