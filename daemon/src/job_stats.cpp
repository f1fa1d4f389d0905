#include "fulfillsync/daemon/job_stats.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

namespace fulfillsync::daemon {
namespace {

void bind_optional(SQLite::Statement& statement, int index, const std::optional<std::string>& value) {
  if (value) {
    statement.bind(index, *value);
  } else {
    statement.bind(index);
  }
}

std::optional<std::string> optional_text(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return column.getString();
}

}  // namespace

void save_job_stats(CheckpointStore& store, const std::vector<JobStats>& stats) {
  SQLite::Transaction transaction(store.database(), SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement& upsert = store.prepared(
      "INSERT INTO job_stats (job, runs, failed_runs, items, last_run_seconds, last_success_at, data_as_of, "
      "updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) "
      "ON CONFLICT (job) DO UPDATE SET runs = excluded.runs, failed_runs = excluded.failed_runs, "
      "items = excluded.items, last_run_seconds = excluded.last_run_seconds, "
      // A restart starts counting afresh; what it has not seen yet is kept from before.
      "last_success_at = coalesce(excluded.last_success_at, last_success_at), "
      "data_as_of = coalesce(excluded.data_as_of, data_as_of), updated_at = excluded.updated_at");
  for (const JobStats& job : stats) {
    upsert.reset();
    upsert.bind(1, job.job);
    upsert.bind(2, static_cast<int64_t>(job.runs));
    upsert.bind(3, static_cast<int64_t>(job.failed_runs));
    upsert.bind(4, static_cast<int64_t>(job.items));
    upsert.bind(5, job.last_run_seconds);
    bind_optional(upsert, 6, job.last_success_at);
    bind_optional(upsert, 7, job.data_as_of);
    upsert.exec();
  }
  transaction.commit();
}

std::vector<JobStats> load_job_stats(CheckpointStore& store) {
  SQLite::Statement& query = store.prepared(
      "SELECT job, runs, failed_runs, items, last_run_seconds, last_success_at, data_as_of, updated_at "
      "FROM job_stats ORDER BY job");
  std::vector<JobStats> stats;
  while (query.executeStep()) {
    stats.push_back(JobStats{.job = query.getColumn(0).getString(),
                             .runs = static_cast<long>(query.getColumn(1).getInt64()),
                             .failed_runs = static_cast<long>(query.getColumn(2).getInt64()),
                             .items = static_cast<long>(query.getColumn(3).getInt64()),
                             .last_run_seconds = query.getColumn(4).getDouble(),
                             .last_success_at = optional_text(query.getColumn(5)),
                             .data_as_of = optional_text(query.getColumn(6)),
                             .updated_at = query.getColumn(7).getString()});
  }
  return stats;
}

}  // namespace fulfillsync::daemon
