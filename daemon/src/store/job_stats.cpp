#include "fulfillsync/daemon/store/job_stats.hpp"

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
  CheckpointStore::WriteTransaction transaction(store);
  SQLite::Statement& upsert = store.prepared(
      "INSERT INTO job_stats (job, runs, failed_runs, items, last_run_seconds, last_success_at, data_as_of, "
      "failed_in_a_row, paused, last_answer_at, last_answer_status, last_error_at, last_error, updated_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) "
      "ON CONFLICT (job) DO UPDATE SET runs = excluded.runs, failed_runs = excluded.failed_runs, "
      "items = excluded.items, last_run_seconds = excluded.last_run_seconds, "
      // A restart starts counting afresh; what it has not seen yet is kept from before.
      "last_success_at = coalesce(excluded.last_success_at, last_success_at), "
      "data_as_of = coalesce(excluded.data_as_of, data_as_of), failed_in_a_row = excluded.failed_in_a_row, "
      "paused = excluded.paused, last_answer_at = coalesce(excluded.last_answer_at, last_answer_at), "
      "last_answer_status = coalesce(excluded.last_answer_status, last_answer_status), "
      "last_error_at = coalesce(excluded.last_error_at, last_error_at), "
      "last_error = coalesce(excluded.last_error, last_error), updated_at = excluded.updated_at");
  for (const JobStats& job : stats) {
    upsert.reset();
    upsert.bind(1, job.job);
    upsert.bind(2, static_cast<int64_t>(job.runs));
    upsert.bind(3, static_cast<int64_t>(job.failed_runs));
    upsert.bind(4, static_cast<int64_t>(job.items));
    upsert.bind(5, job.last_run_seconds);
    bind_optional(upsert, 6, job.last_success_at);
    bind_optional(upsert, 7, job.data_as_of);
    upsert.bind(8, static_cast<int64_t>(job.failed_in_a_row));
    upsert.bind(9, job.paused ? 1 : 0);
    bind_optional(upsert, 10, job.last_answer_at);
    if (job.last_answer_at) {
      upsert.bind(11, job.last_answer_status);
    } else {
      upsert.bind(11);
    }
    bind_optional(upsert, 12, job.last_error_at);
    bind_optional(upsert, 13, job.last_error_at ? std::optional(job.last_error) : std::nullopt);
    upsert.exec();
  }
  transaction.commit();
}

std::vector<JobStats> load_job_stats(CheckpointStore& store) {
  SQLite::Statement& query = store.prepared(
      "SELECT job, runs, failed_runs, items, last_run_seconds, last_success_at, data_as_of, updated_at, "
      "failed_in_a_row, paused, last_answer_at, last_answer_status, last_error_at, last_error "
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
                             .failed_in_a_row = static_cast<long>(query.getColumn(8).getInt64()),
                             .paused = query.getColumn(9).getInt() != 0,
                             .last_answer_at = optional_text(query.getColumn(10)),
                             .last_answer_status = query.getColumn(11).getInt(),
                             .last_error_at = optional_text(query.getColumn(12)),
                             .last_error = optional_text(query.getColumn(13)).value_or(""),
                             .updated_at = query.getColumn(7).getString()});
  }
  return stats;
}

}  // namespace fulfillsync::daemon
