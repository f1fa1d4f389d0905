#include "sqlite_support.hpp"

#include <algorithm>
#include <cassert>

#include "fulfillsync/common/invariant.hpp"
#include "sqlite_change_time.hpp"
#include "sqlite_content_hash.hpp"

namespace fulfillsync::merchant {
SqliteConnection::SqliteConnection(const config::MerchantConfig& config, bool read_only)
    : path_(config.sqlite.path), prefix_(config.result_table_prefix) {
  if (!is_plain_identifier(prefix_)) {
    throw MerchantDatabaseError(fmt::format("result_table_prefix '{}' is not a plain SQL identifier", prefix_));
  }
  if (!std::filesystem::exists(path_)) {
    throw MerchantDatabaseError(fmt::format("merchant database {} does not exist", path_.string()));
  }
  try {
    if (read_only) {
      side_files_.emplace(path_);
      db_ = sqlite::open_read_only(path_);
    } else {
      // One thread uses the connection (see the class): no SQLite mutex around every call.
      db_ = std::make_unique<SQLite::Database>(path_.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_NOMUTEX);
    }
    // The merchant's application writes to the same file: wait for its locks rather than fail.
    db_->setBusyTimeout(static_cast<int>(config.sqlite.busy_timeout.count()));
    register_change_time(*db_, config.timezone);
    register_content_hash(*db_);
  } catch (const SQLite::Exception& e) {
    throw MerchantDatabaseError(fmt::format("merchant database {}: {}", path_.string(), e.what()));
  }
}

SqliteConnection::~SqliteConnection() = default;

SQLite::Statement& SqliteConnection::prepared(const std::string& sql) { return statements_.prepared(*db_, sql); }

void bind(SQLite::Statement& statement, int index, const SqlValue& value) {
  if (const auto* integer = std::get_if<std::int64_t>(&value.value())) {
    statement.bind(index, static_cast<int64_t>(*integer));
  } else if (const auto* text = std::get_if<std::string>(&value.value())) {
    statement.bindNoCopy(index, *text);
  } else {
    statement.bind(index);
  }
}

ClearedAfterUse::~ClearedAfterUse() {
  try {
    statement_.clearBindings();
  } catch (const SQLite::Exception&) {
    // Left bound, the statement would point into freed rows at its next step.
    FULFILLSYNC_UNREACHABLE("sqlite3_clear_bindings always succeeds");
  }
}

int run(SQLite::Statement& statement, SqlValues values) {
  statement.reset();
  const ClearedAfterUse cleared(statement);
  // Each parameter named once: none is left NULL by mistake (a name the SQL lacks throws).
  assert(static_cast<int>(values.size()) == statement.getBindParameterCount());
  for (const Named& named : values) {
    // fmt, not string concatenation: GCC 12 at -O3 warns falsely (-Wrestrict) on the latter.
    bind(statement, statement.getIndex(fmt::format(":{}", named.name).c_str()), named.value);
  }
  return statement.exec();
}

Upsert::Upsert(SQLite::Database& db, std::string table) : RowUpsert(std::move(table), std::nullopt), db_(db) {}
Upsert::Upsert(SQLite::Database& db, std::string table, OnConflict on_conflict)
    : RowUpsert(std::move(table), std::move(on_conflict)), db_(db) {}
Upsert::~Upsert() = default;

int Upsert::write(SqlValues row) {
  if (!statement_) {
    statement_ = std::make_unique<SQLite::Statement>(
        db_, upsert_sql(table_, row, on_conflict_, [](std::size_t, std::string_view name) { return fmt::format(":{}", name); }));
    assert(static_cast<int>(row.size()) == statement_->getBindParameterCount());
    // Looked up once: finding a parameter by name scans them all, for every value of every row.
    for (const Named& named : row) {
      indexes_.push_back(statement_->getIndex(fmt::format(":{}", named.name).c_str()));
      FULFILLSYNC_INVARIANT(indexes_.back() > 0, "an Upsert's SQL names a parameter for each column");
    }
  }
  check_columns(row);
  statement_->reset();
  const ClearedAfterUse cleared(*statement_);
  for (std::size_t i = 0; i < row.size(); ++i) bind(*statement_, indexes_[i], row[i].value);
  return statement_->exec();
}

std::vector<std::vector<std::string>> Upsert::run_batches(std::span<const Batch> batches, bool read) {
  std::vector<std::vector<std::string>> written;
  for (const Batch& batch : batches) {
    std::unique_ptr<SQLite::Statement>& statement = batch_statements_[batch.sql];
    if (!statement) statement = std::make_unique<SQLite::Statement>(db_, *batch.sql);
    statement->reset();
    const ClearedAfterUse cleared(*statement);
    int index = 0;
    for (const std::vector<Named>& row : batch.rows) {
      for (const Named& named : row) bind(*statement, ++index, named.value);
    }
    if (!read) {
      statement->exec();
      continue;
    }
    // The keys it returns, a row each.
    std::vector<std::string>& keys = written.emplace_back();
    while (statement->executeStep()) {
      std::string& key = keys.emplace_back();
      for (int c = 0; c < statement->getColumnCount(); ++c) {
        if (c > 0) key += kKeySeparator;
        key += statement->getColumn(c).getString();
      }
    }
  }
  return written;
}

std::optional<std::string> optional_text(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return column.getString();
}

std::optional<timestamps::TimePoint> optional_time(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return timestamps::parse_iso8601(column.getString());
}

std::string now_text() { return timestamps::format_iso8601_z(timestamps::Clock::now()); }

}  // namespace fulfillsync::merchant
