#include "fulfillsync/daemon/store/checkpoint_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <sqlite3.h>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>

#include "fulfillsync/common/sqlite_migrations.hpp"
#include "fulfillsync/schema/migrations.hpp"

namespace fulfillsync::daemon {
namespace {

constexpr const char* kVersionTable = "schema_migrations";

}  // namespace

CheckpointStore::CheckpointStore(const std::filesystem::path& path, Access access,
                                 const sqlite::BeforeMigrating& before_migrating)
    : path_(path) {
  if (access != Access::exclusive) {
    open_beside_daemon(access);
    return;
  }
  const std::filesystem::path directory = path_.has_parent_path() ? path_.parent_path() : ".";
  if (!std::filesystem::is_directory(directory)) {
    throw CheckpointStoreError(fmt::format("checkpoint store {}: directory {} does not exist", path_.string(),
                                           directory.string()));
  }
  // Creating the file ourselves sets its mode; SQLite would create it world-readable under umask 022.
  lock_fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) {
    throw CheckpointStoreError(fmt::format("checkpoint store {}: {}", path_.string(), std::strerror(errno)));
  }
  // Two daemons on one store would send the same orders twice.
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw CheckpointStoreError(error == EWOULDBLOCK
                                   ? fmt::format("checkpoint store {} is in use by another fulfillsyncd", path_.string())
                                   : fmt::format("checkpoint store {}: {}", path_.string(), std::strerror(error)));
  }
  try {
    // One thread uses the connection: SQLite's own mutex would only cost a lock per call.
    db_ = std::make_unique<SQLite::Database>(path_.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_NOMUTEX);
    db_->setBusyTimeout(5000);
    // Damage shows here rather than as a failed write in the middle of a send.
    const std::string integrity = db_->execAndGet("PRAGMA quick_check(1)").getString();
    if (integrity != "ok") throw CheckpointStoreDamaged(damaged(integrity));
    db_->exec("PRAGMA journal_mode = WAL");
    // The ledger's in_flight mark must be on disk before a request leaves: FULL syncs every commit.
    db_->exec("PRAGMA synchronous = FULL");
    db_->exec("PRAGMA foreign_keys = ON");
    sqlite::migrate(*db_, schema::checkpoint_migrations(), kVersionTable,
                    fmt::format("checkpoint store {}", path_.string()), before_migrating);
  } catch (const sqlite::MigrationError& e) {
    throw CheckpointStoreError(e.what());
  } catch (const SQLite::Exception& e) {
    const int code = e.getErrorCode() & 0xff;
    if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) throw CheckpointStoreDamaged(damaged(e.what()));
    throw CheckpointStoreError(fmt::format("checkpoint store {}: {}", path_.string(), e.what()));
  }
}

std::string CheckpointStore::damaged(std::string_view detail) const {
  return fmt::format("checkpoint store {} is damaged ({})", path_.string(), detail);
}

void CheckpointStore::open_beside_daemon(Access access) {
  try {
    if (access == Access::read_only) {
      side_files_.emplace(path_);
      db_ = sqlite::open_read_only(path_);
    } else {
      db_ = std::make_unique<SQLite::Database>(path_.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_NOMUTEX);
      db_->exec("PRAGMA synchronous = FULL");
    }
    db_->setBusyTimeout(10000);
    const int version = schema_version();
    const int expected = static_cast<int>(schema::checkpoint_migrations().size());
    if (version != expected) {
      throw CheckpointStoreError(fmt::format(
          "checkpoint store {} is at schema version {}, this fulfillsyncd reads version {}{}", path_.string(), version,
          expected, version < expected ? ": start the daemon once to migrate it" : ""));
    }
  } catch (const SQLite::Exception& e) {
    throw CheckpointStoreError(fmt::format("checkpoint store {}: {}", path_.string(), e.what()));
  }
}

std::optional<std::string> CheckpointStore::cursor(std::string_view job) {
  // The jobs read and save their cursors on every run: each statement is prepared once.
  SQLite::Statement& query = prepared("SELECT position FROM cursors WHERE job = ?");
  query.bind(1, std::string(job));
  if (!query.executeStep()) return std::nullopt;
  std::string position = query.getColumn(0).getString();
  query.reset();  // a statement left on a row would hold its read snapshot
  return position;
}

void CheckpointStore::save_cursor(std::string_view job, std::string_view position) {
  SQLite::Statement& upsert =
      prepared("INSERT INTO cursors (job, position, updated_at) VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) "
               "ON CONFLICT (job) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at");
  upsert.bind(1, std::string(job));
  upsert.bind(2, std::string(position));
  upsert.exec();
}

bool CheckpointStore::advance_cursor(std::string_view job, const std::optional<std::string>& from,
                                     std::string_view position) {
  // Compare and set: another process (`fulfillsyncd resync`) may have moved the cursor meanwhile.
  SQLite::Statement& write =
      prepared(from ? "UPDATE cursors SET position = ?2, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
                      "WHERE job = ?1 AND position = ?3"
                    : "INSERT INTO cursors (job, position, updated_at) VALUES (?1, ?2, "
                      "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) ON CONFLICT (job) DO NOTHING");
  write.bind(1, std::string(job));
  write.bind(2, std::string(position));
  if (from) write.bind(3, *from);
  return write.exec() == 1;
}

std::int64_t CheckpointStore::data_version() {
  SQLite::Statement& query = prepared("PRAGMA data_version");
  query.executeStep();
  const std::int64_t version = query.getColumn(0).getInt64();
  query.reset();
  return version;
}

CheckpointStore::WriteTransaction::WriteTransaction(CheckpointStore& store)
    : store_(store), transaction_(store.statements_, *store.db_, "BEGIN IMMEDIATE") {}

void CheckpointStore::WriteTransaction::commit() {
  transaction_.commit();
  if (store_.commits_synced_) ++store_.synced_commits_;
}

void CheckpointStore::sync_commits(bool synced) {
  // Counted as not synced from before the switch until after the switch back: never the other way.
  if (!synced) commits_synced_ = false;
  prepared(synced ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL").exec();
  if (synced) commits_synced_ = true;
}

CheckpointStore::~CheckpointStore() {
  statements_.clear();  // finalized before the connection closes
  db_.reset();
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

SQLite::Statement& CheckpointStore::prepared(const std::string& sql) { return statements_.prepared(*db_, sql); }

int CheckpointStore::schema_version() const { return sqlite::schema_version(*db_, kVersionTable); }

std::string sql_modifier_ago(std::chrono::milliseconds ago) {
  return fmt::format("-{}.{:03} seconds", ago.count() / 1000, ago.count() % 1000);
}

}  // namespace fulfillsync::daemon
