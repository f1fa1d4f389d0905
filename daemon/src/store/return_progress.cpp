#include "store/return_progress.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

namespace fulfillsync::daemon {

std::vector<std::int64_t> ReturnProgress::open_returns() {
  SQLite::Statement& query = store_.prepared(
      "SELECT o.remote_id FROM outbound_ledger AS o LEFT JOIN return_progress AS p ON p.remote_id = o.remote_id "
      "WHERE o.kind = 'return_create' AND o.state = 'created' AND o.remote_id IS NOT NULL "
      "AND (p.status IS NULL OR p.status NOT IN ('Completed', 'Cancelled')) ORDER BY o.remote_id");
  std::vector<std::int64_t> ids;
  while (query.executeStep()) ids.push_back(query.getColumn(0).getInt64());
  return ids;
}

void ReturnProgress::save(std::span<const merchant::ReturnStatusRecord> records) {
  CheckpointStore::WriteTransaction transaction(store_);
  SQLite::Statement& upsert = store_.prepared(
      "INSERT INTO return_progress (remote_id, status, as_of) VALUES (?1, ?2, ?3) ON CONFLICT (remote_id) "
      "DO UPDATE SET status = excluded.status, as_of = excluded.as_of WHERE excluded.as_of >= as_of");
  for (const auto& record : records) {
    upsert.reset();
    upsert.bind(1, static_cast<int64_t>(record.remote_id));
    upsert.bind(2, record.status);
    upsert.bind(3, record.as_of);
    upsert.exec();
  }
  transaction.commit();
}

int ReturnProgress::forget_since(timestamps::TimePoint since) {
  SQLite::Statement forget(store_.database(), "DELETE FROM return_progress WHERE as_of >= ?");
  forget.bind(1, timestamps::format_iso8601_z(since));
  return forget.exec();
}

}  // namespace fulfillsync::daemon
