#include "fulfillsync/common/sqlite_migrations.hpp"

#include "fulfillsync/common/invariant.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

namespace fulfillsync::sqlite {
namespace {

bool is_plain_identifier(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return !(name.front() >= '0' && name.front() <= '9');
}

}  // namespace

// The version table's name is written into SQL as it is, and a gap or a swap in the numbering would
// apply a migration to a schema it was not written for: both are checked in every build type (once
// per store opened).
int schema_version(SQLite::Database& db, std::string_view version_table) {
  FULFILLSYNC_INVARIANT(is_plain_identifier(version_table), "a version table is named in plain SQL");
  if (!db.tableExists(std::string(version_table))) return 0;
  SQLite::Statement query(db, fmt::format("SELECT coalesce(max(version), 0) FROM \"{}\"", version_table));
  query.executeStep();
  return query.getColumn(0).getInt();
}

int migrate(SQLite::Database& db, std::span<const Migration> migrations, std::string_view version_table,
            std::string_view store, const BeforeMigrating& before_migrating) {
  FULFILLSYNC_INVARIANT(is_plain_identifier(version_table), "a version table is named in plain SQL");
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    FULFILLSYNC_INVARIANT(migrations[i].version == static_cast<int>(i) + 1, "migrations are numbered 1, 2, 3, ...");
  }
  const int newest_known = static_cast<int>(migrations.size());

  db.exec(fmt::format(
      "CREATE TABLE IF NOT EXISTS \"{}\" (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
      "applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
      version_table));
  const int current = schema_version(db, version_table);
  if (current > newest_known) {
    throw MigrationError(fmt::format(
        "{} is at schema version {}, but this fulfillsync (newest schema version {}) is older than the one "
        "that wrote it; run the newer fulfillsync or restore a backup taken before the upgrade",
        store, current, newest_known));
  }
  if (current < newest_known && before_migrating) before_migrating(current, newest_known);
  for (int version = current + 1; version <= newest_known; ++version) {
    const Migration& step = migrations[static_cast<std::size_t>(version - 1)];
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    try {
      db.exec(std::string(step.sql));
    } catch (const SQLite::Exception& e) {
      throw MigrationError(
          fmt::format("{}: migration {} ({}) failed: {}", store, step.version, step.name, e.what()));
    }
    SQLite::Statement record(db, fmt::format("INSERT INTO \"{}\" (version, name) VALUES (?, ?)", version_table));
    record.bind(1, step.version);
    record.bind(2, std::string(step.name));
    record.exec();
    transaction.commit();
  }
  return newest_known;
}

}  // namespace fulfillsync::sqlite
