#include "sqlite_sync_results.hpp"

#include "result_rows.hpp"

namespace fulfillsync::merchant {
namespace {

SyncResult read_result_row(SQLite::Statement& query, SourceKind kind) {
  return result_from_columns(kind, [&](int i) { return optional_text(query.getColumn(i)); });
}

}  // namespace

void SqliteSyncResults::write_results(SourceKind kind, std::span<const SyncResult> results) {
  if (results.empty()) return;
  // Prepared once per table and connection: writes come in small batches (each commit of marks
  // announces a few sends), where preparing the statements again cost more than the rows.
  std::unique_ptr<Upsert>& upsert = upserts_[static_cast<std::size_t>(kind)];
  if (!upsert) upsert = std::make_unique<Upsert>(db(), connection_.result_table(kind), result_upsert_rules());
  std::vector<std::vector<Named>> rows;
  rows.reserve(results.size());
  for (const SyncResult& result : results) rows.push_back(result_row(kind, result));
  connection_.in_write_transaction(fmt::format("writing {}", connection_.result_table(kind)),
                                   [&] { upsert->write_all(rows); });
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
